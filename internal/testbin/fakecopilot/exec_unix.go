//go:build unix

package fakecopilot

// exec on Unix: the process is replaced, its pid kept.

import (
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// execKeepingHold replaces the process with argv, the .hold's descriptor
// (and so its flock) carried over: a CLI that exec()s another program.
func execKeepingHold(hold *os.File, argv []string) error {
	if len(argv) == 0 {
		return nil
	}
	if hold != nil {
		if _, err := unix.FcntlInt(hold.Fd(), unix.F_SETFD, 0); err != nil {
			return err
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return unix.Exec(path, argv, os.Environ())
}

// execSignal asks the fake CLI to exec (see --exec-on-usr1).
var execSignal os.Signal = unix.SIGUSR1
