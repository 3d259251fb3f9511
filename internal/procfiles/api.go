package procfiles

// The package's calls, documented once; each system implements the
// lower-case ones.

import "context"

// Openers returns the processes that have the file want open, each with
// its start time, and how many processes could not be examined (on macOS,
// other users'). path must name want before and after the look-up, else
// the error wraps ErrChanged. macOS and Windows only.
func Openers(ctx context.Context, path string, want FileID) (procs []Process, unseen int, err error) {
	r, err := guarded(ctx, func(ctx context.Context) (found, error) { return openers(ctx, path, want) })
	return r.procs, r.unseen, err
}

// Executable returns the path of the executable pid runs, as the kernel
// found it at exec (links resolved). macOS only.
func Executable(pid int) (string, error) { return executable(pid) }

// Terminal returns the name of pid's controlling terminal in /dev
// ("ttys004"), or "" if it has none. macOS only.
func Terminal(pid int) (string, error) { return terminal(pid) }

// found is what Openers finds.
type found struct {
	procs  []Process
	unseen int
}
