package watch

// Process exits on macOS: kqueue NOTE_EXIT.

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// kqueueWatcher awaits exits with one kqueue: EVFILT_PROC NOTE_EXIT per
// process, and an EVFILT_USER event that wakes the reader when closing.
type kqueueWatcher struct {
	kq    int
	exits chan<- int
	done  chan struct{}
	ended chan struct{}

	mu   sync.Mutex
	pids map[int]bool
}

const wakeIdent = 1

func newExitWatcher(exits chan<- int) exitWatcher {
	kq, err := unix.Kqueue()
	if err != nil {
		return unsupportedWatcher{}
	}
	unix.CloseOnExec(kq)
	var ev [1]unix.Kevent_t
	unix.SetKevent(&ev[0], wakeIdent, unix.EVFILT_USER, unix.EV_ADD|unix.EV_CLEAR)
	if _, err := unix.Kevent(kq, ev[:], nil, nil); err != nil {
		unix.Close(kq)
		return unsupportedWatcher{}
	}
	w := &kqueueWatcher{kq: kq, exits: exits, done: make(chan struct{}), ended: make(chan struct{}), pids: map[int]bool{}}
	go w.read()
	return w
}

func (w *kqueueWatcher) add(pid int, start time.Time) error {
	var ev [1]unix.Kevent_t
	unix.SetKevent(&ev[0], pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev[0].Fflags = unix.NOTE_EXIT
	w.mu.Lock()
	w.pids[pid] = true
	w.mu.Unlock()
	if _, err := unix.Kevent(w.kq, ev[:], nil, nil); err != nil {
		w.forget(pid)
		if errors.Is(err, unix.ESRCH) {
			return errExited
		}
		return err
	}
	// Registered first, confirmed after: a pid reused in between is caught.
	if got, err := sessionlocks.ProcessStart(pid); err != nil || !sessionlocks.SameStart(got, start) {
		w.remove(pid)
		return errExited
	}
	return nil
}

func (w *kqueueWatcher) forget(pid int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := w.pids[pid]
	delete(w.pids, pid)
	return had
}

func (w *kqueueWatcher) remove(pid int) {
	if !w.forget(pid) {
		return
	}
	var ev [1]unix.Kevent_t
	unix.SetKevent(&ev[0], pid, unix.EVFILT_PROC, unix.EV_DELETE)
	unix.Kevent(w.kq, ev[:], nil, nil) // ENOENT once it fired: nothing to undo
}

func (w *kqueueWatcher) read() {
	defer close(w.ended)
	evs := make([]unix.Kevent_t, 32)
	for {
		n, err := unix.Kevent(w.kq, nil, evs, nil)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		for _, ev := range evs[:n] {
			if ev.Filter == unix.EVFILT_USER {
				return
			}
			if ev.Filter != unix.EVFILT_PROC || ev.Fflags&unix.NOTE_EXIT == 0 {
				continue
			}
			pid := int(ev.Ident)
			if !w.forget(pid) {
				continue
			}
			select {
			case w.exits <- pid:
			case <-w.done:
				return
			}
		}
	}
}

func (w *kqueueWatcher) close() {
	select {
	case <-w.done:
		return
	default:
	}
	close(w.done)
	var ev [1]unix.Kevent_t
	unix.SetKevent(&ev[0], wakeIdent, unix.EVFILT_USER, 0)
	ev[0].Fflags = unix.NOTE_TRIGGER
	unix.Kevent(w.kq, ev[:], nil, nil)
	<-w.ended
	unix.Close(w.kq)
}
