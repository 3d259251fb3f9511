package watch

// Process exits on Linux: pidfds in Go's netpoller.

import (
	"errors"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// pidfdWatcher awaits exits with pidfds (Linux 5.3+) registered with Go's
// netpoller: a pidfd becomes readable when its process exits, so a waiting
// process costs one descriptor and a parked goroutine, not a thread.
type pidfdWatcher struct {
	exits chan<- int
	done  chan struct{}

	mu     sync.Mutex
	files  map[int]*os.File
	closed bool
}

func newExitWatcher(exits chan<- int) exitWatcher {
	return &pidfdWatcher{exits: exits, done: make(chan struct{}), files: map[int]*os.File{}}
}

func (w *pidfdWatcher) add(pid int, start time.Time) error {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.EINVAL) {
		// Linux 5.3-5.9 know pidfd_open but not PIDFD_NONBLOCK.
		if fd, err = unix.PidfdOpen(pid, 0); err == nil {
			err = unix.SetNonblock(fd, true)
			if err != nil {
				unix.Close(fd)
			}
		}
	}
	switch {
	case errors.Is(err, unix.ESRCH):
		return errExited
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL):
		return errUnsupported
	case err != nil:
		return err
	}
	// The pidfd now pins this pid to one process; only if that process is
	// the one the engine probed is its exit the one awaited.
	got, err := sessionlocks.ProcessStart(pid)
	if err != nil || !sessionlocks.SameStart(got, start) {
		unix.Close(fd)
		return errExited
	}
	f := os.NewFile(uintptr(fd), "pidfd:"+strconv.Itoa(pid))
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return errUnsupported
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		f.Close()
		return errUnsupported
	}
	if old := w.files[pid]; old != nil {
		old.Close()
	}
	w.files[pid] = f
	w.mu.Unlock()
	go w.wait(pid, f, rc)
	return nil
}

func (w *pidfdWatcher) wait(pid int, f *os.File, rc interface {
	Read(func(uintptr) bool) error
}) {
	// Read returns once the callback reports the pidfd readable, parking on
	// the netpoller in between; Close makes it return with an error.
	err := rc.Read(func(fd uintptr) bool {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 0)
		return err != nil && err != unix.EINTR || n > 0
	})
	w.mu.Lock()
	mine := w.files[pid] == f
	if mine {
		delete(w.files, pid)
	}
	w.mu.Unlock()
	if !mine {
		return // removed or replaced
	}
	f.Close()
	// An error here means the pidfd was not pollable after all; reporting
	// it as an exit gets its sessions listed again and, if still alive, polled.
	_ = err
	select {
	case w.exits <- pid:
	case <-w.done:
	}
}

func (w *pidfdWatcher) remove(pid int) {
	w.mu.Lock()
	f := w.files[pid]
	delete(w.files, pid)
	w.mu.Unlock()
	if f != nil {
		f.Close()
	}
}

func (w *pidfdWatcher) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	close(w.done)
	files := w.files
	w.files = nil
	w.mu.Unlock()
	for _, f := range files {
		f.Close()
	}
}
