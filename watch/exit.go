package watch

// Awaiting processes' exits: the interface each OS implements, and the
// bookkeeping of the waits under way that they share.

import (
	"errors"
	"sync"
	"time"
)

var (
	// errExited means the process is gone, or its pid now names another
	// process, so there is nothing to wait for.
	errExited = errors.New("process already exited")
	// errUnsupported means this platform (or kernel) cannot await the exit.
	errUnsupported = errors.New("awaiting a process exit is not supported here")
)

// exitWatcher awaits the exits of processes and sends each one's pid on
// the channel given to newExitWatcher (at most once per add).
type exitWatcher interface {
	// add starts awaiting pid's exit. The handle is opened first and the
	// start time checked after: a pid reused in between is never watched.
	add(pid int, start time.Time) error
	remove(pid int) // an exit already sent may still arrive
	close()
}

// unsupportedWatcher awaits nothing: every process is polled.
type unsupportedWatcher struct{}

func (unsupportedWatcher) add(int, time.Time) error { return errUnsupported }
func (unsupportedWatcher) remove(int)               {}
func (unsupportedWatcher) close()                   {}

// waits are the exits awaited, by pid, each with the function that cancels
// it (closing or signalling the system's handle). Every cancel runs under
// mu, once, and only while its wait is recorded: its handle is still open.
type waits struct {
	exits chan<- int
	done  chan struct{} // closed by close: no exit is sent after
	mu    sync.Mutex
	by    map[int]*wait // nil once closed
}

// A wait is one process awaited.
type wait struct{ cancel func() }

func newWaits(exits chan<- int) *waits {
	return &waits{exits: exits, done: make(chan struct{}), by: map[int]*wait{}}
}

// start records a wait for pid that cancel cancels; once closed it refuses.
// A wait recorded for pid already (another process now) is cancelled.
func (w *waits) start(pid int, cancel func()) (*wait, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by == nil {
		return nil, errUnsupported
	}
	if old := w.by[pid]; old != nil {
		old.cancel()
	}
	x := &wait{cancel}
	w.by[pid] = x
	return x, nil
}

// end forgets wait x for pid (nil: whichever is recorded) and reports
// whether it was still recorded; if not, it was cancelled.
func (w *waits) end(pid int, x *wait) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.by[pid]
	if cur == nil || x != nil && cur != x {
		return false
	}
	delete(w.by, pid)
	return true
}

func (w *waits) send(pid int) {
	select {
	case w.exits <- pid:
	case <-w.done:
	}
}

func (w *waits) remove(pid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if x := w.by[pid]; x != nil {
		delete(w.by, pid)
		x.cancel()
	}
}

// close cancels every wait; no exit is sent after.
func (w *waits) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by == nil {
		return
	}
	close(w.done)
	for _, x := range w.by {
		x.cancel()
	}
	w.by = nil
}
