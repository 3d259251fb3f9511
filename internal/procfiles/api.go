package procfiles

// The package's calls, documented once; each system implements the
// lower-case ones (procfiles_darwin.go, procfiles_windows.go,
// procfiles_other.go).

import "context"

// Openers returns the processes that have the file want open, each with
// its start time, and how many processes could not be examined (unseen:
// on macOS, other users' processes unless this one is root; any of them may
// have the file open too). path names the file (the Restart Manager takes
// names; libproc matches want): it must be want before and after the
// look-up, else the error wraps ErrChanged. This process is listed too if
// it has the file open. macOS and Windows only.
func Openers(ctx context.Context, path string, want FileID) (procs []Process, unseen int, err error) {
	r, err := guarded(ctx, func(ctx context.Context) (found, error) { return openers(ctx, path, want) })
	return r.procs, r.unseen, err
}

// Executable returns the path of the executable pid runs, as the kernel
// found it at exec (links resolved; Linux's /proc/<pid>/exe). macOS only
// (gopsutil reads it on Windows).
func Executable(pid int) (string, error) { return executable(pid) }

// Terminal returns the name of pid's controlling terminal in /dev
// ("ttys004"), or "" if it has none. macOS only: Linux names it in
// /proc/<pid>/stat, and Windows has no other-process console to read.
func Terminal(pid int) (string, error) { return terminal(pid) }

// found is what Openers finds.
type found struct {
	procs  []Process
	unseen int
}
