//go:build !unix

package fakecli

import (
	"errors"
	"os"
	"syscall"
)

// The fake CLI only runs where tests run: Unix. Elsewhere it compiles and refuses.
func flockExclusive(f *os.File) error { return errors.New("fakecli: flock is unix-only") }
func unlock(f *os.File)               {}

func execKeepingHold(hold *os.File, argv []string) error { return errors.ErrUnsupported }

// execSignal is never sent here: exec is unix-only.
var execSignal os.Signal = syscall.SIGHUP
