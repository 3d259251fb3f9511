package watch

// Process exits on Windows: waits on process handles.

import (
	"errors"
	"time"

	"golang.org/x/sys/windows"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// handleWatcher waits on each process's handle and an event that cancels it.
type handleWatcher struct{ *waits }

func newExitWatcher(exits chan<- int) exitWatcher { return handleWatcher{newWaits(exits)} }

func (w handleWatcher) add(pid int, start time.Time) error {
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
	x, err := w.start(pid, func() { windows.SetEvent(ev) })
	if err != nil {
		windows.CloseHandle(ev)
		windows.CloseHandle(h)
		return err
	}
	go func() {
		r, err := windows.WaitForMultipleObjects([]windows.Handle{h, ev}, false, windows.INFINITE)
		windows.CloseHandle(h)
		mine := w.end(pid, x)
		// Recorded no more, ev is signalled by nobody from here on.
		windows.CloseHandle(ev)
		if mine && err == nil && r == windows.WAIT_OBJECT_0 {
			w.send(pid)
		}
	}()
	return nil
}
