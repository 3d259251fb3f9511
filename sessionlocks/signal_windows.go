package sessionlocks

// Ending the proven owner of a session on Windows, and only it: a process
// handle is opened first and the owner verified after, so TerminateProcess
// through it cannot reach another process. Windows has no SIGTERM: a
// console program can only be ended, and only with kill.

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/windows"
)

// errNoGracefulStop says that the owner can only be ended at once.
var errNoGracefulStop = errors.New("Windows has no way to ask a console program to exit (no SIGTERM); forceResume with kill ends it at once")

type target struct {
	pid    int
	owner  *Owner
	h      windows.Handle
	killed bool
}

func openOwner(o *Owner) (*target, error) {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE|windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(o.PID))
	if err != nil {
		return nil, fmt.Errorf("pid %d: %w", o.PID, err)
	}
	t := &target{pid: o.PID, owner: o, h: h}
	if err := t.verify(o); err != nil {
		t.close()
		return nil, err
	}
	return t, nil
}

// verify checks, with the handle open, that its process is still the owner.
func (t *target) verify(o *Owner) error {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(t.h, &creation, &exit, &kernel, &user); err != nil {
		return fmt.Errorf("pid %d: %w", o.PID, err)
	}
	if !SameStart(time.Unix(0, creation.Nanoseconds()), o.StartedAt) {
		return fmt.Errorf("pid %d is another process now", o.PID)
	}
	if ev, _ := windows.WaitForSingleObject(t.h, 0); ev == windows.WAIT_OBJECT_0 {
		return fmt.Errorf("pid %d has exited", o.PID)
	}
	return checkOwner(o)
}

func (t *target) terminate() error { return errNoGracefulStop }

// kill ends the process; the caller verified the owner right before.
func (t *target) kill() error { return windows.TerminateProcess(t.h, 1) }

func (t *target) close() { windows.CloseHandle(t.h) }

// awaitExits waits until every target's handle is signalled (its process
// exited) or deadline passes, and returns the pids that exited.
func awaitExits(ts []*target, deadline time.Time) map[int]bool {
	exited := map[int]bool{}
	for {
		for _, t := range ts {
			if ev, _ := windows.WaitForSingleObject(t.h, 0); ev == windows.WAIT_OBJECT_0 {
				exited[t.pid] = true
			}
		}
		if len(exited) == len(ts) || !time.Now().Before(deadline) {
			return exited
		}
		time.Sleep(10 * time.Millisecond)
	}
}
