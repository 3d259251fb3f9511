package sessionlocks

// Proving which process holds a session: the only process Force may ever
// signal. A pid is a number; it is proof of nothing. The proof is a tie the
// kernel vouches for between a process and this session's own files (the
// exclusive flock on the holder's .hold, named in the kernel's lock table;
// for a CLI that writes no .hold, an open descriptor on the session's
// session.db), that process's pid being the one the lock file names (in its
// own PID namespace), and its having started before the file was made, so
// that a pid reused since the lock's first owner died cannot pass.
//
// What the real CLIs give (observed with 1.0.45 to 1.0.102): 1.0.89 and
// later flock inuse.<pid>.hold for their whole life; 1.0.45 and 1.0.65 keep
// session.db open (locked only during writes); 1.0.85 keeps nothing in the
// session directory open, so nothing proves which process holds its
// sessions.

import (
	"fmt"
	"path/filepath"
)

// sessionDB is the SQLite database CLIs 1.0.45 to 1.0.65 keep open in
// their session directory.
const sessionDB = "session.db"

// prove finds the Owner of live holder r, or says why none is proven.
func (e *Engine) prove(r lockRef, sg *sight) (*Owner, string) {
	k := sg.kernelLocks()
	if !k.ok {
		return nil, "which process holds a lock can be proven only where the kernel lists file locks with their owners (Linux's /proc/locks), and it cannot be read here"
	}
	if r.hold.exists() && isRegular(r.hold) {
		hold := filepath.Base(r.holdPath())
		for _, l := range k.on(r.hold) {
			if l.kind != lockFlock || !l.write {
				continue
			}
			if o := e.tie(l.pid, r.pid, r.hold, hold, "holds the exclusive flock on "+hold+" (the kernel's lock table says so)"); o != nil {
				return o, ""
			}
		}
		if e.nestedNS {
			return nil, fmt.Sprintf("the kernel's lock table shows no flock on %s by a process this sidecar can see: it runs in a PID namespace of its own, and the kernel hides the owners outside it", hold)
		}
		return nil, fmt.Sprintf("the kernel's lock table shows no exclusive flock on %s by pid %d (or by a process whose pid in its own PID namespace is %d) that started before the file was made", hold, r.pid, r.pid)
	}
	if db, err := lstatID(filepath.Join(r.dir, sessionDB)); err == nil && isRegular(db) && r.lock.exists() {
		pids := []int{r.pid}
		if !e.nestedNS {
			pids = append(pids, e.inOtherNamespaces(r.pid)...)
		}
		for _, pid := range pids {
			if !hasOpen(pid, db) {
				continue
			}
			if o := e.tie(pid, r.pid, r.lock, filepath.Base(r.lockPath()), "has this session's "+sessionDB+" open"); o != nil {
				o.file, o.openFile = db, true
				return o, ""
			}
		}
	}
	return nil, fmt.Sprintf("the lock has no .hold (a CLI older than 1.0.89), and pid %d does not have this session's %s open, so nothing ties a process to this session", r.pid, sessionDB)
}

// tie returns the Owner if the process pid (here), tied to the session by
// evidence, is the one the lock files name as named and started before
// file (named name) was made; nil if not.
func (e *Engine) tie(pid, named int, file fileID, name, evidence string) *Owner {
	if pid <= 0 || !namesPID(pid, named) {
		return nil
	}
	p := readProc(pid)
	if p.state != procAlive || p.start.IsZero() {
		return nil
	}
	boot, bootErr := bootTime()
	if p.start.After(file.modTime().Add(e.tolerance(boot, bootErr))) {
		return nil // the pid was reused after the lock's first owner died
	}
	o := &Owner{PID: pid, StartedAt: p.start, file: file, exe: procExeID(pid), argv: p.argv, uid: p.uid}
	o.Evidence = fmt.Sprintf("pid %d %s, and started before %s was made", pid, evidence, name)
	if pid != named {
		o.NamespacePID = named
		o.Evidence = fmt.Sprintf("pid %d (pid %d in its own PID namespace) %s, and started before %s was made", pid, named, evidence, name)
	}
	return o
}
