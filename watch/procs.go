package watch

// Processes and settle windows: the exits of the processes a session's
// holders name (awaited where the system can, polled elsewhere), and the
// end of each starting holder's settle window, make the session dirty.

import (
	"errors"
	"slices"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// proc is one process watched for its exit on behalf of sessions: a pid
// and the start time that tells it from a later process given the same pid.
type proc struct {
	start    time.Time       // zero when unknown: then it cannot be awaited
	sessions map[string]bool // the sessions whose listing its exit can change
	polled   bool            // not awaited: its sessions are listed again every tick
}

// pidStart is a process as a listing names it.
type pidStart struct {
	pid   int
	start time.Time
}

// exitsOf lists the processes whose exit can change what is said of h: the
// holder's own, unless it is judged stale already, and its launcher's while
// it lives (its exit makes the holder an orphan).
func exitsOf(h sessionlocks.Holder) []pidStart {
	if h.Verdict == sessionlocks.Stale {
		return nil
	}
	var start time.Time
	if h.Process != nil {
		start = h.Process.StartedAt
	}
	out := []pidStart{{h.PID, start}}
	if l := h.Launcher; l != nil && l.Alive {
		out = append(out, pidStart{l.PID, l.StartedAt})
	}
	return out
}

// track watches the processes s's holders name and schedules a listing for
// when its starting holders leave their settle window: no file changes
// when a "starting" lock becomes "hold-locked".
func (l *loop) track(s sessionlocks.Session) {
	var pids []int
	var due time.Time
	for _, h := range s.Holders {
		if h.Reason == sessionlocks.ReasonStarting {
			if t := h.LockWrittenAt.Add(l.w.settle + settleMargin); t.After(due) {
				due = t
			}
		}
		for _, ps := range exitsOf(h) {
			if !slices.Contains(pids, ps.pid) {
				pids = append(pids, ps.pid)
				l.watchProc(ps, s.ID)
			}
		}
	}
	l.untrack(s.ID, pids)
	if pids != nil {
		l.ofSess[s.ID] = pids
	}
	switch now := time.Now(); {
	case due.IsZero():
		delete(l.settle, s.ID)
	case due.Before(now):
		// Still starting past its window (a lock stamped in the future, or
		// another machine's clock): look again in a while, not at once.
		l.settle[s.ID] = now.Add(exitPollInterval)
	default:
		l.settle[s.ID] = due
	}
}

// watchProc watches ps for session id, unless it is watched already.
func (l *loop) watchProc(ps pidStart, id string) {
	p := l.procs[ps.pid]
	// SameStart never matches a zero time, but a process examined neither
	// time is still the same polled one.
	if p != nil && !p.start.Equal(ps.start) && !sessionlocks.SameStart(p.start, ps.start) {
		l.dropProc(ps.pid) // the pid names another process now
		p = nil
	}
	if p == nil {
		p = &proc{start: ps.start, sessions: map[string]bool{}}
		l.procs[ps.pid] = p
		l.await(ps, p, id)
	}
	p.sessions[id] = true
}

// await starts awaiting p's exit, or polls it where that cannot be done.
func (l *loop) await(ps pidStart, p *proc, id string) {
	if ps.start.IsZero() {
		// Without a start time no handle can be tied to the process the
		// lock named.
		p.polled = true
		return
	}
	switch err := l.ex.add(ps.pid, ps.start); {
	case err == nil:
	case errors.Is(err, errExited):
		// Gone (or replaced) between the listing and the handle: list it
		// again now, and poll it if the engine still calls it alive.
		p.polled = true
		l.markDirty(id, false)
	default:
		if !errors.Is(err, errUnsupported) {
			l.w.log.Debug("cannot await a process's exit; polling it", "pid", ps.pid, "err", err)
		}
		p.polled = true
	}
}

// untrack detaches session id from the processes it no longer names (all
// of them when keep is nil).
func (l *loop) untrack(id string, keep []int) {
	for _, pid := range l.ofSess[id] {
		if slices.Contains(keep, pid) {
			continue
		}
		if p := l.procs[pid]; p != nil {
			delete(p.sessions, id)
			if len(p.sessions) == 0 {
				l.dropProc(pid)
			}
		}
	}
	if keep == nil {
		delete(l.ofSess, id)
	}
}

func (l *loop) dropProc(pid int) {
	if p := l.procs[pid]; p != nil && !p.polled {
		l.ex.remove(pid)
	}
	delete(l.procs, pid)
}

// exited makes the sessions of an awaited process that exited dirty. If a
// listing still names it alive (it should not), it is polled from then on
// rather than awaited again.
func (l *loop) exited(pid int) {
	p := l.procs[pid]
	if p == nil || p.polled {
		return
	}
	p.polled = true
	for id := range p.sessions {
		l.markDirty(id, false)
	}
}

// pollProcs makes the sessions of the processes not awaited dirty.
func (l *loop) pollProcs() {
	for _, p := range l.procs {
		if p.polled {
			for id := range p.sessions {
				l.markDirty(id, false)
			}
		}
	}
}

// settleDue makes the sessions whose settle windows have ended dirty.
func (l *loop) settleDue() {
	now := time.Now()
	for id, t := range l.settle {
		if !t.After(now) {
			delete(l.settle, id)
			l.markDirty(id, false)
		}
	}
}
