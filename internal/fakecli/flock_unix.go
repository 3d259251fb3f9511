//go:build unix

package fakecli

// The fake CLI's locks on Unix: flock(2), as the real CLI takes them.

import (
	"os"

	"golang.org/x/sys/unix"
)

func openHold(path string) (*os.File, error) { return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644) }

func flockExclusive(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }

func unlock(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }
