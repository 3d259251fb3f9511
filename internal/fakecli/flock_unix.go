//go:build unix

package fakecli

// The fake CLI's locks on Unix: flock(2), as the real CLI takes them.

import (
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// openHold opens (creating) the .hold.
func openHold(path string) (*os.File, error) { return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644) }

func flockExclusive(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }
func unlock(f *os.File)               { unix.Flock(int(f.Fd()), unix.LOCK_UN) }

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

// execPlain replaces the process with argv; descriptors opened close-on-exec
// (the .hold among them) close, as a CLI exec'ing another program would.
func execPlain(argv []string) error { return execKeepingHold(nil, argv) }
