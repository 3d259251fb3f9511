//go:build unix

package sessionlocks

// The Unix calls the portable engine rests on: file identities and stats,
// the .hold probe, removal that takes only the file judged, signals, and
// reading small files without following links.

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

func statToID(st *unix.Stat_t) fileID {
	id := fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size}
	sec, nsec := st.Mtim.Unix()
	id.msec, id.mnsec = sec, int32(nsec)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		id.mode = 1
	case unix.S_IFDIR:
		id.mode = uint32(os.ModeDir)
	case unix.S_IFLNK:
		id.mode = uint32(os.ModeSymlink)
	case unix.S_IFIFO:
		id.mode = uint32(os.ModeNamedPipe)
	case unix.S_IFSOCK:
		id.mode = uint32(os.ModeSocket)
	default:
		id.mode = uint32(os.ModeDevice)
	}
	return id
}

// lstatID is lstat as a fileID.
func lstatID(path string) (fileID, error) { return dirStat{fd: unix.AT_FDCWD}.lstat(path) }

// noEINTR calls f again while it fails with EINTR.
func noEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

// openRegular opens name (relative to the directory dfd) to read, never
// through a final symlink and never blocking on a FIFO: errNotRegular for
// anything but a regular file, whose identity is returned all the same.
func openRegular(dfd int, name string) (int, fileID, error) {
	fd, err := openNoIntr(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC)
	if err == unix.ELOOP {
		err = errNotRegular
	}
	if err != nil {
		return -1, fileID{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fileID{}, err
	}
	id := statToID(&st)
	if !isRegular(id) {
		unix.Close(fd)
		return -1, id, errNotRegular
	}
	return fd, id, nil
}

// probeHold asks whether anyone holds an exclusive flock on path: a shared,
// non-blocking flock on a fresh descriptor fails exactly then, and is
// released at once otherwise. If the path now names a file other than want
// (a CLI re-created it), it is not touched: its owner may be about to flock it.
func probeHold(path string, want fileID) holdProbe {
	fd, id, err := openRegular(unix.AT_FDCWD, path)
	if err != nil {
		return holdProbe{id: id, err: err}
	}
	defer unix.Close(fd)
	if !sameFile(want, id) {
		return holdProbe{id: id, changed: true}
	}
	switch err := noEINTR(func() error { return unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) }); err {
	case nil:
		unix.Flock(fd, unix.LOCK_UN)
		return holdProbe{held: false, id: id}
	case unix.EWOULDBLOCK:
		return holdProbe{held: true, id: id}
	default:
		return holdProbe{id: id, err: err}
	}
}

func tryLock(f *os.File) error {
	err := noEINTR(func() error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) })
	if err == unix.EWOULDBLOCK {
		return errLockBusy
	}
	return err
}

func unlockFile(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// signalZero is kill(pid, 0): nil or EPERM mean a process (maybe a zombie) has the pid.
func signalZero(pid int) error { return unix.Kill(pid, 0) }

// openNoFollow opens a regular file for reading, never through a final
// symlink and never blocking on a FIFO; its identity is the open file's.
func openNoFollow(path string) (*os.File, fileID, error) {
	fd, id, err := openRegular(unix.AT_FDCWD, path)
	switch {
	case err == errNotRegular:
		return nil, id, err
	case err != nil:
		return nil, id, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), id, nil
}

// openNoIntr is openat, retried on EINTR; a created file gets mode 0o644.
func openNoIntr(at int, name string, flags int) (fd int, err error) {
	err = noEINTR(func() (err error) { fd, err = unix.Openat(at, name, flags, 0o644); return err })
	return fd, err
}

// dirStat lstat's and removes names in one directory, opened once without
// following links: a session directory swapped for a symlink cannot
// redirect a rename or an unlink. Where it cannot be opened, each call
// fails as the directory did.
type dirStat struct {
	fd  int
	err error
	dir string
}

func openDirStat(dir string) dirStat {
	fd, err := openNoIntr(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return dirStat{fd: -1, err: &os.PathError{Op: "open", Path: dir, Err: err}, dir: dir}
	}
	return dirStat{fd: fd, dir: dir}
}

func (d dirStat) lstat(name string) (fileID, error) {
	if d.err != nil {
		return fileID{}, d.err
	}
	var st unix.Stat_t
	if err := noEINTR(func() error { return unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return fileID{}, &os.PathError{Op: "lstat", Path: filepath.Join(d.dir, name), Err: err}
	}
	return statToID(&st), nil
}

func (d dirStat) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
	}
}

// openDirNoFollow opens dir for listing, failing rather than follow a
// symlink in its place.
func openDirNoFollow(dir string) (*os.File, error) {
	fd, err := openNoIntr(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			err = errNotDir
		}
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// statID is stat (following links: the state dir may be one) as a fileID.
func statID(path string) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return fileID{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return statToID(&st), nil
}
