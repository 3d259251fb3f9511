package watch

// Holder processes: awaiting the exits of the processes that hold sessions
// (or polling those that cannot be awaited), and re-probing starting holders
// when their settle window ends.

import (
	"errors"
	"slices"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// proc is one holder process being watched for exit.
type proc struct {
	start    time.Time
	sessions map[string]bool
	polled   bool // no exit event source: its sessions are re-probed every second
	exited   bool // its exit was seen; never awaited again
}

func (l *loop) handleExit(pid int) {
	p := l.procs[pid]
	if p == nil || p.exited {
		return
	}
	// Polled from now on: if the engine still calls it alive (it should
	// not), it is looked at every second rather than awaited again.
	p.exited, p.polled = true, true
	l.ex.remove(pid)
	l.caches.InvalidatePID(pid)
	for id := range p.sessions {
		l.markDirty(id, false)
	}
}

// settleDue re-probes the sessions whose starting holders have come of age;
// no file changes when a "starting" lock becomes "hold-locked".
func (l *loop) settleDue() {
	now := time.Now()
	for id, t := range l.settle {
		if !t.After(now) {
			delete(l.settle, id)
			l.markDirty(id, false)
		}
	}
}

// pollExits re-probes the sessions of holders whose exit cannot be awaited.
func (l *loop) pollExits() {
	for pid, p := range l.procs {
		if p.polled {
			l.caches.InvalidatePID(pid)
			for id := range p.sessions {
				l.markDirty(id, false)
			}
		}
	}
}

// track watches the processes of s's live and unknown holders for exit and
// schedules a re-probe for when its starting holders leave the settle window.
func (l *loop) track(s sessionlocks.Session) {
	var pids []int
	var due time.Time
	for _, h := range s.Holders {
		if h.Reason == sessionlocks.ReasonStarting {
			t := h.LockWrittenAt.Add(l.e.Settle() + settleMargin)
			if t.After(due) {
				due = t
			}
		}
		if h.Verdict == sessionlocks.Stale || slices.Contains(pids, h.PID) {
			continue
		}
		// A holder whose process could not be examined has no start time
		// and is polled (watchProc); one that can be is awaited.
		var start time.Time
		if h.Process != nil {
			start = h.Process.StartedAt
		}
		pids = append(pids, h.PID)
		p := l.procs[h.PID]
		// SameStart never matches a zero time, but a holder examined neither
		// time (no start time) is still the same polled process.
		if p != nil && !p.start.Equal(start) && !sessionlocks.SameStart(p.start, start) {
			l.dropProc(h.PID)
			p = nil
		}
		if p == nil {
			p = l.watchProc(h.PID, start, s.ID)
		}
		p.sessions[s.ID] = true
	}
	l.untrack(s.ID, pids)
	l.sessPIDs[s.ID] = pids
	if due.IsZero() {
		delete(l.settle, s.ID)
		return
	}
	if now := time.Now(); due.Before(now) {
		// Still starting past its window (a lock stamped in the future,
		// or another clock): look again in a while, not in a tight loop.
		due = now.Add(exitPollInterval)
	}
	l.settle[s.ID] = due
}

// untrack detaches session id from the processes it no longer references.
func (l *loop) untrack(id string, keep []int) {
	for _, pid := range l.sessPIDs[id] {
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
		delete(l.sessPIDs, id)
	}
}

func (l *loop) dropProc(pid int) {
	if p := l.procs[pid]; p != nil && !p.polled && !p.exited {
		l.ex.remove(pid)
	}
	delete(l.procs, pid)
}

// watchProc starts watching pid, which the engine saw started at start.
func (l *loop) watchProc(pid int, start time.Time, id string) *proc {
	p := &proc{start: start, sessions: map[string]bool{}}
	l.procs[pid] = p
	if start.IsZero() {
		// Without a start time a handle cannot be tied to the process the
		// lock named.
		p.polled = true
		return p
	}
	switch err := l.ex.add(pid, start); {
	case err == nil:
	case errors.Is(err, errExited):
		// Gone (or replaced) between the probe and the handle: re-probe now,
		// and poll rather than await if the engine still calls it alive.
		p.exited, p.polled = true, true
		l.caches.InvalidatePID(pid)
		l.markDirty(id, false)
	default:
		if !errors.Is(err, errUnsupported) {
			l.w.log.Debug("cannot await a holder's exit; polling it", "pid", pid, "err", err)
		}
		p.polled = true
	}
	return p
}
