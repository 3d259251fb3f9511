//go:build !unix

package fakecli

import (
	"errors"
	"os"
)

// The fake CLI only runs where tests run: Unix. Elsewhere it compiles and refuses.
func flockExclusive(f *os.File) error { return errors.New("fakecli: flock is unix-only") }
func unlock(f *os.File)               {}
