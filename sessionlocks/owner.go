package sessionlocks

// Proving which process holds a session: the only process Force may ever
// signal. The proof is a process whose pid is the one the lock file names
// (here, or in the nested PID namespace it runs in) that started before the
// file was made and has that very file open: the holder's .hold, holding
// its exclusive flock (CLIs 1.0.88 and later); else the session's
// session.db (1.0.45 to 1.0.65; 1.0.85 keeps nothing open).

import (
	"fmt"
	"path/filepath"
	"runtime"
	"time"
)

// lockWord names the .hold's lock as the CLI takes it.
func lockWord() string {
	if runtime.GOOS == "windows" {
		return "lock"
	}
	return "flock"
}

// sessionDB is the SQLite database CLIs 1.0.45 to 1.0.65 keep open.
const sessionDB = "session.db"

// ownerSlack absorbs the rounding of start and file times: an owner must
// have started before its file was made, to within this.
const ownerSlack = 20 * time.Millisecond

// prove finds the Owner of live holder r, or says why none is proven.
func (e *Engine) prove(r lockRef, o *judgeOpts) (*Owner, string) {
	if e.noOwnerProof {
		return nil, "owner evidence is switched off (a test of what a system without descriptor evidence does)"
	}
	// The named pid first, then processes of other PID namespaces.
	candidates := func(yield func(int) bool) {
		if !yield(r.pid) {
			return
		}
		for _, pid := range e.inOtherNamespaces(r.pid, o.began) {
			if !yield(pid) {
				return
			}
		}
	}
	why := ""
	if r.hold.exists() && isRegular(r.hold) {
		hold := filepath.Base(r.holdPath())
		for pid := range candidates {
			o, err := e.tie(pid, r.pid, r.hold.modTime(), hold, r.hold, r.holdPath(), true, "holds the exclusive "+lockWord()+" on "+hold)
			if o != nil {
				return o, ""
			}
			if err != nil && why == "" {
				why = err.Error()
			}
		}
		switch {
		case e.nestedNS:
			return nil, fmt.Sprintf("no process this sidecar can see holds %s: it runs in a PID namespace of its own, which hides every process outside it", hold)
		case why != "":
			return nil, fmt.Sprintf("nothing proves which process holds %s: %s", hold, why)
		}
		return nil, fmt.Sprintf("no process with pid %d (here, or in a PID namespace of its own) that started before %s was made holds its exclusive %s", r.pid, hold, lockWord())
	}
	dbPath := filepath.Join(r.dir, sessionDB)
	if db, err := lstatID(dbPath); err == nil && isRegular(db) && r.lock.exists() {
		lock := filepath.Base(r.lockPath())
		for pid := range candidates {
			if o, _ := e.tie(pid, r.pid, r.lock.modTime(), lock, db, dbPath, false, "has this session's "+sessionDB+" open"); o != nil {
				return o, ""
			}
		}
	}
	return nil, fmt.Sprintf("the lock has no .hold (a CLI older than 1.0.88), and pid %d does not have this session's %s open, so nothing ties a process to this session", r.pid, sessionDB)
}

// tie returns the Owner if the process pid (here) is the one the lock files
// name as named, started before the file madeName was made (at made), and
// has the file open at path open (holding its exclusive lock, with
// exclusive); else nil, and why not where the system could say.
func (e *Engine) tie(pid, named int, made time.Time, madeName string, open fileID, path string, exclusive bool, evidence string) (*Owner, error) {
	if pid <= 0 || !namesPID(pid, named) {
		return nil, nil
	}
	p := readProc(pid)
	if p.state != procAlive || p.start.IsZero() {
		return nil, nil
	}
	if p.start.After(made.Add(ownerSlack)) {
		return nil, nil // started after the file was made: not its maker (a pid reused)
	}
	if err := hasOpen(path, open, pid, exclusive); err != nil {
		return nil, err
	}
	o := &Owner{PID: pid, StartedAt: p.start, open: open, openPath: path, exclusive: exclusive, exe: procExeID(pid), argv: p.argv, uid: p.uid}
	o.Evidence = fmt.Sprintf("pid %d %s, and started before %s was made", pid, evidence, madeName)
	if pid != named {
		o.NamespacePID = named
		o.Evidence = fmt.Sprintf("pid %d (pid %d in its own PID namespace) %s, and started before %s was made", pid, named, evidence, madeName)
	}
	return o, nil
}
