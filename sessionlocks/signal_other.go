//go:build !linux

package sessionlocks

import (
	"errors"
	"time"
)

// Elsewhere nothing proves which process holds a lock (no Owner is ever
// found), and no pidfd binds a signal to one process: Force signals nothing.

type target struct {
	pid   int
	owner *Owner
}

func openOwner(o *Owner) (*target, error) {
	return nil, errors.New("signalling the owner of a session is supported on Linux only")
}

func (t *target) verify(o *Owner) error { return errors.ErrUnsupported }
func (t *target) terminate() error      { return errors.ErrUnsupported }
func (t *target) kill() error           { return errors.ErrUnsupported }
func (t *target) close()                {}

func awaitExits(ts []*target, deadline time.Time) map[int]bool { return map[int]bool{} }
