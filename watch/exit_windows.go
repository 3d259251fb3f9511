package watch

// Process exits on Windows: waits on process handles.

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sys/windows"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// handleWatcher awaits exits by waiting on each process's handle
// together with an event that cancels the wait.
type handleWatcher struct {
	exits chan<- int
	done  chan struct{}

	mu     sync.Mutex
	cancel map[int]windows.Handle
	closed bool
}

func newExitWatcher(exits chan<- int) exitWatcher {
	return &handleWatcher{exits: exits, done: make(chan struct{}), cancel: map[int]windows.Handle{}}
}

func (w *handleWatcher) add(pid int, start time.Time) error {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	switch {
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER):
		return errExited // no such process
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return errUnsupported
	case err != nil:
		return err
	}
	// The handle now pins the process; confirm it is the one the lock named.
	if got, err := sessionlocks.ProcessStart(pid); err != nil || !sessionlocks.SameStart(got, start) {
		windows.CloseHandle(h)
		return errExited
	}
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(h)
		return err
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		windows.CloseHandle(ev)
		windows.CloseHandle(h)
		return errUnsupported
	}
	if old, ok := w.cancel[pid]; ok {
		windows.SetEvent(old)
	}
	w.cancel[pid] = ev
	w.mu.Unlock()
	go w.wait(pid, h, ev)
	return nil
}

func (w *handleWatcher) wait(pid int, h, ev windows.Handle) {
	r, err := windows.WaitForMultipleObjects([]windows.Handle{h, ev}, false, windows.INFINITE)
	windows.CloseHandle(h)
	// ev is closed under the lock that remove and close signal it under,
	// so they never signal a closed (or reused) handle.
	w.mu.Lock()
	mine := w.cancel[pid] == ev
	if mine {
		delete(w.cancel, pid)
	}
	windows.CloseHandle(ev)
	w.mu.Unlock()
	if !mine || err != nil || r != windows.WAIT_OBJECT_0 {
		return
	}
	select {
	case w.exits <- pid:
	case <-w.done:
	}
}

func (w *handleWatcher) remove(pid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev, ok := w.cancel[pid]; ok {
		windows.SetEvent(ev)
		delete(w.cancel, pid)
	}
}

func (w *handleWatcher) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	close(w.done)
	for pid, ev := range w.cancel {
		windows.SetEvent(ev)
		delete(w.cancel, pid)
	}
}
