package main

// heldElsewhere on Windows: LockFileEx on the first byte.

import (
	"os"

	"golang.org/x/sys/windows"
)

// heldElsewhere reports whether a shared lock on f's first byte fails
// because another handle holds an exclusive one.
func heldElsewhere(f *os.File) bool {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err == nil {
		windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
	}
	return err == windows.ERROR_LOCK_VIOLATION
}
