//go:build !linux && !darwin && !windows

package sessionlocks

import (
	"errors"
	"time"
)

// Elsewhere nothing proves which process holds a lock (no Owner is ever
// found), and nothing is signalled.

type target struct {
	pid    int
	owner  *Owner
	killed bool
}

func openOwner(o *Owner) (*target, error) {
	return nil, errors.New("signalling the owner of a session is supported on Linux, macOS and Windows only")
}

func (t *target) verify(o *Owner) error { return errors.ErrUnsupported }
func (t *target) terminate() error      { return errors.ErrUnsupported }
func (t *target) kill() error           { return errors.ErrUnsupported }
func (t *target) close()                {}

func awaitExits(ts []*target, deadline time.Time) map[int]bool { return map[int]bool{} }

var errNoGracefulStop = errors.New("unused here")
