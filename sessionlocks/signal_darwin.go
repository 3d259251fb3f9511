package sessionlocks

// Signalling the proven owner of a session on macOS, and only it. There is
// no pidfd: each signal is sent right after the owner is proven again,
// which leaves only the moment before kill(2) for its pid to be reused.

import (
	"errors"
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

func (t *target) verify(o *Owner) error { return checkOwner(o) }

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
