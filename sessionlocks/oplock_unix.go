//go:build unix

package sessionlocks

// The CLI's per-session operation lock on Unix: flock, opened below the
// state dir without following links.

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openOpLockFile opens (creating if needed) the operation lock file of
// session id. Below the state dir (which may be a link) every name is
// opened relative to its directory's descriptor and never through a link.
func openOpLockFile(stateDir, id string) (*os.File, error) {
	dirPath := filepath.Join(stateDir, opLockDir)
	path := filepath.Join(dirPath, id+".lock")
	sfd, err := openNoIntr(unix.AT_FDCWD, stateDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return nil, &FileError{Op: "open", Path: stateDir, Err: err}
	}
	defer unix.Close(sfd)
	switch err := unix.Mkdirat(sfd, opLockDir, 0o700); {
	case err == nil:
		if dfd, err := openNoIntr(sfd, opLockDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC); err == nil {
			ownLikeStateDir(dfd, sfd)
			unix.Close(dfd)
		}
	case err != unix.EEXIST:
		return nil, &FileError{Op: "mkdir", Path: dirPath, Err: err}
	}
	if testHookOpLockDir != nil {
		testHookOpLockDir(dirPath)
	}
	dfd, err := openNoIntr(sfd, opLockDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			err = fmt.Errorf("not a directory (a symbolic link or a file stands in its place): %w", errNotRegular)
		}
		return nil, &FileError{Op: "open", Path: dirPath, Err: err}
	}
	defer unix.Close(dfd)
	for {
		fd, err := openNoIntr(dfd, id+".lock", unix.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC)
		if err == unix.ENOENT {
			fd, err = openNoIntr(dfd, id+".lock", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC)
			if err == unix.EEXIST {
				continue // created meanwhile (by the CLI): open that one
			}
			if err == nil {
				ownLikeStateDir(fd, sfd)
			}
		}
		if err != nil {
			if err == unix.ELOOP {
				err = errNotRegular
			}
			return nil, &FileError{Op: "open", Path: path, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			unix.Close(fd)
			if err == nil {
				err = errNotRegular
			}
			return nil, &FileError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// ownLikeStateDir gives a file root created in the state dir (open at fd)
// to the state dir's owner (open at stateFd): a root-owned operation-lock
// directory would stop the user's CLI from opening any session.
func ownLikeStateDir(fd, stateFd int) {
	if unix.Geteuid() != 0 {
		return
	}
	var st unix.Stat_t
	if unix.Fstat(stateFd, &st) == nil && st.Uid != 0 {
		unix.Fchown(fd, int(st.Uid), int(st.Gid))
	}
}
