package sessionlocks

// Signalling the proven owner of a session, and only it: the pidfd is
// opened first and the owner verified after (checkOwner), so a signal sent
// through it cannot reach another process, whatever happens to the pid.

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// target is an owner with a pidfd open on it.
type target struct {
	pid    int
	fd     int
	owner  *Owner // what it was proven to be
	killed bool
}

// errNoGracefulStop: every owner can be asked to exit here (SIGTERM).
var errNoGracefulStop = errors.New("unused on Linux")

// openOwner opens a pidfd on o and verifies that it is still o.
func openOwner(o *Owner) (*target, error) {
	fd, err := unix.PidfdOpen(o.PID, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return nil, fmt.Errorf("pid %d has exited", o.PID)
	case errors.Is(err, unix.ENOSYS):
		return nil, errors.New("this kernel has no pidfd (Linux 5.3 or later), without which a signal could reach a process that reused the pid")
	case err != nil:
		return nil, fmt.Errorf("pidfd_open %d: %w", o.PID, err)
	}
	t := &target{pid: o.PID, fd: fd}
	if err := t.verify(o); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// verify checks, with the pidfd open, that the process is still the owner:
// the pidfd's signal 0 after the checks says they read its own process.
func (t *target) verify(o *Owner) error {
	if err := checkOwner(o); err != nil {
		return err
	}
	if err := unix.PidfdSendSignal(t.fd, 0, nil, 0); err != nil {
		return fmt.Errorf("pid %d has exited", o.PID)
	}
	return nil
}

func (t *target) signal(sig unix.Signal) error { return unix.PidfdSendSignal(t.fd, sig, nil, 0) }

func (t *target) terminate() error { return t.signal(unix.SIGTERM) }

func (t *target) kill() error { return t.signal(unix.SIGKILL) }

func (t *target) close() { unix.Close(t.fd) }

// awaitExits waits until every target has exited (its pidfd polls
// readable) or deadline passes, and returns the pids that exited.
func awaitExits(ts []*target, deadline time.Time) map[int]bool {
	exited := map[int]bool{}
	for {
		var fds []unix.PollFd
		var waiting []*target
		for _, t := range ts {
			if !exited[t.pid] {
				fds = append(fds, unix.PollFd{Fd: int32(t.fd), Events: unix.POLLIN})
				waiting = append(waiting, t)
			}
		}
		if len(fds) == 0 {
			return exited
		}
		wait := time.Until(deadline)
		if wait < 0 {
			wait = 0
		}
		n, err := unix.Poll(fds, int(min(wait, time.Hour).Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return exited
		}
		for i, f := range fds {
			if f.Revents != 0 {
				exited[waiting[i].pid] = true
			}
		}
		if n == 0 && !time.Now().Before(deadline) {
			return exited
		}
	}
}
