package watch

// Processes and settle windows: a holder's process exiting (awaited, or
// polled) or its settle window ending makes its session dirty.

import (
	"errors"
	"slices"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// proc is one process watched for its exit on behalf of sessions.
type proc struct {
	start    time.Time // zero when unknown: then it cannot be awaited
	sessions []string  // the sessions whose listing its exit can change
	polled   bool      // not awaited: its sessions are listed again every tick
}

// pidStart is a process as a listing names it.
type pidStart struct {
	pid   int
	start time.Time
}

// exitsOf lists the processes whose exit can change what is said of h: the
// holder's own unless it is stale, and its launcher's while it lives.
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

// watchProcs watches the processes whose exit can change what is said of
// the sessions last listed, and only those.
func (l *loop) watchProcs() {
	named := map[int]*proc{}
	for id, s := range l.last {
		for _, h := range s.Holders {
			for _, ps := range exitsOf(h) {
				p := named[ps.pid]
				if p == nil {
					p = &proc{start: ps.start}
					named[ps.pid] = p
				}
				if !slices.Contains(p.sessions, id) {
					p.sessions = append(p.sessions, id)
				}
			}
		}
	}
	for pid, p := range l.procs {
		// A process examined neither time (zero starts) is the same polled one.
		if n := named[pid]; n == nil || !p.start.Equal(n.start) && !sessionlocks.SameStart(p.start, n.start) {
			// Gone from the listings, or the pid names another process now.
			if !p.polled {
				l.ex.remove(pid)
			}
			delete(l.procs, pid)
		}
	}
	for pid, n := range named {
		if p := l.procs[pid]; p != nil {
			p.sessions = n.sessions
			continue
		}
		l.procs[pid] = n
		l.await(pid, n)
	}
}

// await starts awaiting p's exit, or polls it where that cannot be done.
func (l *loop) await(pid int, p *proc) {
	err := errUnsupported // a zero start: no handle can be tied to the process the lock named
	if !p.start.IsZero() {
		err = l.ex.add(pid, p.start)
	}
	switch {
	case err == nil:
		return
	case errors.Is(err, errExited):
		l.markProcDirty(p) // gone (or replaced) since the listing: list its sessions again
	case !errors.Is(err, errUnsupported):
		l.w.log.Debug("cannot await a process's exit; polling it", "pid", pid, "err", err)
	}
	p.polled = true
}

// markProcDirty makes the sessions whose listing p's exit can change dirty.
func (l *loop) markProcDirty(p *proc) {
	for _, id := range p.sessions {
		l.markDirty(id, false)
	}
}

// exited makes the sessions of an awaited process that exited dirty; it is
// polled from then on, should a listing still name it alive.
func (l *loop) exited(pid int) {
	if p := l.procs[pid]; p != nil && !p.polled {
		p.polled = true
		l.markProcDirty(p)
	}
}

// pollProcs makes the sessions of the processes not awaited dirty.
func (l *loop) pollProcs() {
	for _, p := range l.procs {
		if p.polled {
			l.markProcDirty(p)
		}
	}
}

// settleAt schedules a listing of s for when its starting holders leave
// their settle window, which no file change marks.
func (l *loop) settleAt(s sessionlocks.Session) {
	var due time.Time
	for _, h := range s.Holders {
		if h.Reason == sessionlocks.ReasonStarting {
			if t := h.LockWrittenAt.Add(l.w.settle + settleMargin); t.After(due) {
				due = t
			}
		}
	}
	switch now := time.Now(); {
	case due.IsZero():
		delete(l.settle, s.ID)
	case due.Before(now):
		// Still starting past its window (a lock from the future): look again later.
		l.settle[s.ID] = now.Add(exitPollInterval)
	default:
		l.settle[s.ID] = due
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
