//go:build unix

package fakecli

import (
	"os"

	"golang.org/x/sys/unix"
)

func flockExclusive(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }
func unlock(f *os.File)               { unix.Flock(int(f.Fd()), unix.LOCK_UN) }
