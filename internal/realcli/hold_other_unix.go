//go:build unix && !linux

package realcli

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// HoldLocked reports whether someone holds a flock on path. Without
// /proc/locks it has to probe: a shared, non-blocking flock on a fresh
// descriptor fails only while an exclusive one is held, and is released at
// once. (On Linux see hold_linux.go for why probing is avoided.)
func HoldLocked(path string) (bool, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	err = unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	unix.Flock(fd, unix.LOCK_UN)
	return false, nil
}
