package sessionlocks

// Which owners may be signalled, and when: never this process, its
// ancestors, a namespace init or another user's process; SIGTERM to each
// proven owner, and SIGKILL after the grace period only to one proven again
// to hold the session right before.

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"time"
)

// terminateOwners sends SIGTERM to the proven owner of each live holder
// that may be signalled, and records every live or unknown holder it does
// not signal, with why.
func (e *Engine) terminateOwners(hs []Holder, kill bool, res *ForceResult) []*target {
	self := os.Getpid()
	uid := os.Getuid()
	protected := ancestors(self)
	var out []*target
	sent := map[int]bool{}
	refuse := func(pid int, why string) {
		res.NotSignalled = append(res.NotSignalled, Refusal{PID: pid, Why: why})
	}
	for _, h := range hs {
		if h.Verdict == Stale {
			continue
		}
		o := h.Owner
		switch {
		case h.Verdict == Unknown:
			refuse(h.PID, "its verdict is unknown, and only a live holder's proven owner is ever signalled")
			continue
		case o == nil:
			refuse(h.PID, "no process is proven to hold this session: "+h.NoOwner)
			continue
		case sent[o.PID]:
			continue // one CLI, two holders (a .lock and an orphan .hold)
		case o.PID == self || protected[o.PID]:
			refuse(h.PID, fmt.Sprintf("pid %d is this sidecar or one of its ancestors (the IDE that started it)", o.PID))
			continue
		case o.PID <= 1 || isNamespaceInit(o.PID):
			refuse(h.PID, fmt.Sprintf("pid %d is the init of a PID namespace: signalling it would stop everything in it", o.PID))
			continue
		case uid >= 0 && o.uid != uid:
			refuse(h.PID, fmt.Sprintf("pid %d belongs to another user (uid %d)", o.PID, o.uid))
			continue
		}
		if e.beforeSignal != nil {
			e.beforeSignal(o)
		}
		t, err := openOwner(o)
		if err != nil {
			refuse(h.PID, err.Error())
			continue
		}
		t.owner = o
		if err = t.terminate(); errors.Is(err, errNoGracefulStop) && kill {
			// It can only be ended at once (Windows), which the user asked for.
			t.killed = true
			if err = t.kill(); err != nil {
				err = fmt.Errorf("it could not be ended: %w", err)
			}
		} else if err != nil {
			err = fmt.Errorf("SIGTERM failed: %w", err)
		}
		if err != nil {
			t.close()
			refuse(h.PID, err.Error())
			continue
		}
		sent[o.PID] = true
		out = append(out, t)
		if t.killed {
			e.log.Info("ended the owner at once (it cannot be asked to exit)", "session", h.SessionID, "pid", o.PID, "evidence", o.Evidence)
			res.Killed = append(res.Killed, o.PID)
		} else {
			e.log.Info("sent SIGTERM", "session", h.SessionID, "pid", o.PID, "verdict", h.Verdict, "reason", h.Reason, "evidence", o.Evidence)
			res.Signalled = append(res.Signalled, o.PID)
		}
	}
	for _, r := range res.NotSignalled {
		e.log.Info("not signalled", "session", hs[0].SessionID, "pid", r.PID, "why", r.Why) // a refusal means hs is not empty
	}
	return out
}

// awaitTargets waits up to the grace period for the signalled owners to
// exit; with Kill, each still running gets SIGKILL if it is proven, right
// before, to hold the session still; then it records who exited.
func (e *Engine) awaitTargets(id string, targets []*target, opts ForceOptions, res *ForceResult) {
	exited := awaitExits(targets, time.Now().Add(opts.Grace))
	if opts.Kill {
		var killed []*target
		for _, t := range targets {
			if exited[t.pid] || t.killed {
				continue
			}
			if err := t.verify(t.owner); err != nil {
				e.log.Info("SIGKILL withheld: the owner no longer holds the session", "session", id, "pid", t.pid, "why", err)
				res.NotSignalled = append(res.NotSignalled, Refusal{PID: t.pid, Why: "SIGKILL withheld: " + err.Error()})
				continue
			}
			if err := t.kill(); err != nil {
				e.log.Warn("SIGKILL failed", "session", id, "pid", t.pid, "err", err)
				continue
			}
			e.log.Info("sent SIGKILL", "session", id, "pid", t.pid)
			res.Killed = append(res.Killed, t.pid)
			killed = append(killed, t)
		}
		for pid := range awaitExits(killed, time.Now().Add(killWait)) {
			exited[pid] = true
		}
	}
	for _, t := range targets {
		if exited[t.pid] {
			res.Exited = append(res.Exited, t.pid)
		} else {
			res.StillRunning = append(res.StillRunning, t.pid)
			e.log.Warn("holder still running after the grace period", "session", id, "pid", t.pid, "grace", opts.Grace)
		}
		t.close()
	}
}

// checkOwner checks that o.PID is still the owner: the same process (its
// start time), running the same command line and executable, with the
// file the proof rests on still open (and locked, with o.exclusive).
func checkOwner(o *Owner) error {
	p := readProc(o.PID)
	switch {
	case p.state != procAlive:
		return fmt.Errorf("pid %d is no longer running", o.PID)
	case !SameStart(p.start, o.StartedAt):
		return fmt.Errorf("pid %d is another process now (started %s, not %s)", o.PID, stamp(p.start), stamp(o.StartedAt))
	case !slices.Equal(p.argv, o.argv):
		return fmt.Errorf("pid %d runs another command line since it was judged (it exec'd %s)", o.PID, describe(p))
	}
	if o.exe.exists() {
		if exe := procExeID(o.PID); exe.dev != o.exe.dev || exe.ino != o.exe.ino {
			return fmt.Errorf("pid %d runs another program since it was judged (it exec'd %s)", o.PID, describe(p))
		}
	}
	if err := hasOpen(o.openPath, o.open, o.PID, o.exclusive); err != nil {
		return fmt.Errorf("pid %d no longer holds the session as it did when proven the owner: %v", o.PID, err)
	}
	return nil
}

// isNamespaceInit reports whether pid is pid 1 of the PID namespace it runs in.
func isNamespaceInit(pid int) bool {
	ns, err := nsPIDs(pid)
	return err == nil && ns[len(ns)-1] == 1
}

// ancestors returns this process's ancestors, which are never signalled.
// Parents are processes (thread-group ids), as every pid signalled is.
func ancestors(pid int) map[int]bool {
	out := map[int]bool{}
	for i := 0; i < 64 && pid > 1; i++ {
		p := readProc(pid)
		if p.ppid <= 0 || out[p.ppid] {
			break
		}
		out[p.ppid] = true
		pid = p.ppid
	}
	return out
}

// SameStart reports whether two start times read for a pid at different
// moments describe the same process: they jitter by microseconds.
func SameStart(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return false
	}
	d := a.Sub(b)
	return -sameStartSlack < d && d < sameStartSlack
}

const sameStartSlack = 20 * time.Millisecond

// ProcessStart returns the start time of pid, so that a watcher that opened
// a handle on pid can confirm it is still the process a lock named.
func ProcessStart(pid int) (time.Time, error) {
	p := readProc(pid)
	switch {
	case p.state == procGone || p.state == procThread:
		return time.Time{}, fmt.Errorf("pid %d is not running", pid)
	case p.start.IsZero():
		if p.err != nil {
			return time.Time{}, p.err
		}
		return time.Time{}, fmt.Errorf("pid %d: start time unknown", pid)
	}
	return p.start, nil
}
