//go:build unix

package main

// heldElsewhere on Unix: flock(2).

import (
	"os"
	"syscall"
)

// heldElsewhere reports whether a shared flock on f fails because another
// descriptor holds an exclusive one.
func heldElsewhere(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) == syscall.EWOULDBLOCK
}
