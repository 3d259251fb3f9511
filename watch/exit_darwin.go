package watch

// Process exits on macOS: kqueue NOTE_EXIT.

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// kqueueWatcher awaits exits with one kqueue: EVFILT_PROC NOTE_EXIT per
// process, and EVFILT_USER to wake the reader when closing.
type kqueueWatcher struct {
	*waits
	kq    int
	ended chan struct{}
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
	w := &kqueueWatcher{waits: newWaits(exits), kq: kq, ended: make(chan struct{})}
	go w.read()
	return w
}

func (w *kqueueWatcher) add(pid int, start time.Time) error {
	// The cancel finds ENOENT once the event fired: nothing to undo.
	x, err := w.start(pid, func() { w.kevent(pid, unix.EV_DELETE) })
	if err != nil {
		return err
	}
	if err := w.kevent(pid, unix.EV_ADD|unix.EV_ONESHOT); err != nil {
		w.end(pid, x)
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

// kevent adds or deletes pid's EVFILT_PROC NOTE_EXIT event.
func (w *kqueueWatcher) kevent(pid int, flags int) error {
	var ev [1]unix.Kevent_t
	unix.SetKevent(&ev[0], pid, unix.EVFILT_PROC, flags)
	ev[0].Fflags = unix.NOTE_EXIT
	_, err := unix.Kevent(w.kq, ev[:], nil, nil)
	return err
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
			pid := int(ev.Ident)
			if ev.Filter == unix.EVFILT_PROC && ev.Fflags&unix.NOTE_EXIT != 0 && w.end(pid, nil) {
				w.send(pid)
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
	w.waits.close()
	var ev [1]unix.Kevent_t
	unix.SetKevent(&ev[0], wakeIdent, unix.EVFILT_USER, 0)
	ev[0].Fflags = unix.NOTE_TRIGGER
	unix.Kevent(w.kq, ev[:], nil, nil)
	<-w.ended
	unix.Close(w.kq)
}
