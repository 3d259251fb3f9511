package watch

// Process exits on Linux: pidfds in Go's netpoller.

import (
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// pidfdWatcher awaits exits with pidfds (Linux 5.3+) in Go's netpoller: a
// waiting process costs one descriptor and a parked goroutine, not a thread.
type pidfdWatcher struct{ *waits }

func newExitWatcher(exits chan<- int) exitWatcher { return pidfdWatcher{newWaits(exits)} }

func (w pidfdWatcher) add(pid int, start time.Time) error {
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return errExited
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL):
		return errUnsupported
	case err != nil:
		return err
	}
	// The pidfd now pins this pid to one process: is it the one the engine saw?
	got, err := sessionlocks.ProcessStart(pid)
	if err != nil || !sessionlocks.SameStart(got, start) {
		unix.Close(fd)
		return errExited
	}
	// Non-blocking, it goes to the netpoller (PIDFD_NONBLOCK needs 5.10).
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return errUnsupported
	}
	f := os.NewFile(uintptr(fd), "pidfd:"+strconv.Itoa(pid))
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return errUnsupported
	}
	x, err := w.start(pid, func() { f.Close() })
	if err != nil {
		f.Close()
		return err
	}
	go func() {
		// Read parks until the pidfd is readable (the exit) or the cancel's
		// Close ends it; any other error counts as an exit too.
		rc.Read(func(fd uintptr) bool {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(pfd, 0)
			return err != nil && err != unix.EINTR || n > 0
		})
		if w.end(pid, x) {
			f.Close()
			w.send(pid)
		}
	}()
	return nil
}
