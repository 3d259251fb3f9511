package sessionlocks

// Signalling the proven owner of a session on macOS, and only it. There is
// no pidfd: each signal is sent right after the owner is proven again (its
// start time, command line, and the .hold open by it alone with its lock
// held), which leaves only the moment between that check and kill(2) for
// the process to exit and its pid to be taken by another.

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

type target struct {
	pid    int
	owner  *Owner
	killed bool
}

func openOwner(o *Owner) (*target, error) {
	t := &target{pid: o.PID, owner: o}
	if err := t.verify(o); err != nil {
		return nil, err
	}
	return t, nil
}

// verify checks that the process is still the owner.
func (t *target) verify(o *Owner) error {
	p := readProc(o.PID)
	switch {
	case p.state != procAlive:
		return fmt.Errorf("pid %d is no longer running", o.PID)
	case !SameStart(p.start, o.StartedAt):
		return fmt.Errorf("pid %d is another process now (started %s, not %s)", o.PID, stamp(p.start), stamp(o.StartedAt))
	case !slices.Equal(p.argv, o.argv):
		return fmt.Errorf("pid %d runs another command line since it was judged (it exec'd %s)", o.PID, describe(p))
	}
	if err := hasOpen(o.openPath, o.open, o.PID, o.exclusive); err != nil {
		return fmt.Errorf("pid %d no longer holds the session as it did when proven the owner: %v", o.PID, err)
	}
	return nil
}

func (t *target) terminate() error {
	if err := t.verify(t.owner); err != nil {
		return err
	}
	return unix.Kill(t.pid, unix.SIGTERM)
}

// kill sends SIGKILL; the caller verified the owner right before.
func (t *target) kill() error { return unix.Kill(t.pid, unix.SIGKILL) }

func (t *target) close() {}

// awaitExits polls until every target has exited (or its pid names another
// process) or deadline passes, and returns the pids that exited.
func awaitExits(ts []*target, deadline time.Time) map[int]bool {
	exited := map[int]bool{}
	for {
		for _, t := range ts {
			p := readProc(t.pid)
			if p.state == procGone || p.state == procZombie || p.state == procAlive && !SameStart(p.start, t.owner.StartedAt) {
				exited[t.pid] = true
			}
		}
		if len(exited) == len(ts) || !time.Now().Before(deadline) {
			return exited
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var errNoGracefulStop = errors.New("unused on macOS")
