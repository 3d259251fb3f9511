//go:build linux || darwin || freebsd || netbsd || openbsd

package rpc

// Stdio's hold on standard output on Unix: descriptor 1 moved aside.

import (
	"os"

	"golang.org/x/sys/unix"
)

// takeStdout moves the protocol to a new descriptor and points descriptor 1
// at standard error, so that even writes straight to fd 1 (cgo, a child
// that inherits it) cannot reach the protocol stream.
func takeStdout() (*os.File, error) {
	fd, err := unix.FcntlInt(uintptr(1), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, os.NewSyscallError("dup stdout", err)
	}
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("dup2 stderr to stdout", err)
	}
	return os.NewFile(uintptr(fd), "/dev/stdout (protocol)"), nil
}
