package watch

// Awaiting processes' exits: the interface each OS implements.

import (
	"errors"
	"time"
)

var (
	// errExited means the process is gone, or its pid now names another
	// process, so there is nothing to wait for.
	errExited = errors.New("process already exited")
	// errUnsupported means this platform (or kernel) cannot await the exit.
	errUnsupported = errors.New("awaiting a process exit is not supported here")
)

// exitWatcher awaits the exits of processes, each named by its pid and
// start time, and sends each one's pid on the channel given to
// newExitWatcher (at most once per add).
type exitWatcher interface {
	// add starts awaiting pid's exit. start is when the engine saw pid
	// start: the handle is opened first and the start time checked after,
	// so that a pid reused in between is never watched in its place.
	add(pid int, start time.Time) error
	// remove stops awaiting pid; an exit already sent may still arrive.
	remove(pid int)
	// close stops everything.
	close()
}

// unsupportedWatcher awaits nothing: every process is polled.
type unsupportedWatcher struct{}

func (unsupportedWatcher) add(int, time.Time) error { return errUnsupported }
func (unsupportedWatcher) remove(int)               {}
func (unsupportedWatcher) close()                   {}
