//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package repl

// Whether a descriptor is a terminal, on the BSDs and macOS.

import "golang.org/x/sys/unix"

func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
	return err == nil
}
