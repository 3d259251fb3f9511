//go:build unix

package sessionlocks

// Removal on Unix: every name resolved relative to the session directory's
// descriptor, opened without following links; rename, check, unlink.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// remover removes files of one session directory, opened once without
// following links: every name is resolved relative to it, so a session
// directory swapped for a symlink cannot redirect a rename or an unlink.
type remover struct {
	dir string
	fd  int
	err error
}

func openRemover(dir string) remover {
	fd, err := openNoIntr(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return remover{dir: dir, fd: -1, err: &os.PathError{Op: "open", Path: dir, Err: err}}
	}
	return remover{dir: dir, fd: fd}
}

func (rm remover) close() {
	if rm.fd >= 0 {
		unix.Close(rm.fd)
	}
}

// remove unlinks name only if it is still the regular file want. A check
// and an unlink by name would race a CLI re-creating the file between the
// two; so the file is first set aside under a name that keeps its own
// (aside.go), checked there, and unlinked only if it is the one judged;
// otherwise it is put back, never over a file that took its name meanwhile.
// A crash between the steps leaves the set-aside file for recover.go.
func (rm remover) remove(name string, want fileID) error {
	if rm.err != nil {
		return rm.err
	}
	path := filepath.Join(rm.dir, name)
	aside := asideName(name)
	if err := unix.Renameat(rm.fd, name, rm.fd, aside); err != nil {
		if err == unix.ENOENT {
			return &os.PathError{Op: "remove", Path: path, Err: fs.ErrNotExist}
		}
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	reached(stepSetAside, path)
	err := rm.check(aside, path, want)
	if err == nil {
		reached(stepChecked, path)
		if uerr := unix.Unlinkat(rm.fd, aside, 0); uerr == nil {
			reached(stepUnlinked, path)
			return nil
		} else {
			err = &os.PathError{Op: "remove", Path: path, Err: uerr}
		}
	}
	return rm.putBack(aside, name, err)
}

// putBack renames aside back to name, never over a file that took the name;
// err is why, returned with what became of the file.
func (rm remover) putBack(aside, name string, err error) error {
	path := filepath.Join(rm.dir, name)
	if berr := rm.restore(aside, name); berr != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &os.PathError{Op: "remove", Path: path, Err: fmt.Errorf("%w; and it could not be put back (%v): it is %s, which the next listing recovers", err, berr, filepath.Join(rm.dir, aside))}
	}
	reached(stepPutBack, path)
	return err
}

// restore renames from to to, failing rather than replace a file at to.
func (rm remover) restore(from, to string) error { return renameExclAt(rm.fd, from, to) }

// unlink removes name outright (a set-aside file proven stale).
func (rm remover) unlink(name string) error { return unix.Unlinkat(rm.fd, name, 0) }

// names lists the directory's entries.
func (rm remover) names() ([]string, error) {
	if rm.err != nil {
		return nil, rm.err
	}
	fd, err := unix.Dup(rm.fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), rm.dir)
	defer f.Close()
	return f.Readdirnames(-1)
}

// lockHold opens the regular file name, checks it is want, and takes its
// exclusive flock without waiting (a zero want checks nothing but that
// it is a regular file): held by this process from before a
// removal's check until after its unlink, so that a CLI opening the same
// file meanwhile either got the lock first (errLockBusy: it is live) or
// cannot get it (the CLI then refuses to open, and nothing is lost).
// Closing the file releases the lock.
func (rm remover) lockHold(name string, want fileID) (*os.File, error) {
	if rm.err != nil {
		return nil, rm.err
	}
	path := filepath.Join(rm.dir, name)
	fd, err := openNoIntr(rm.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC)
	if err != nil {
		if err == unix.ELOOP {
			err = errNotRegular
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if got := statToID(&st); !isRegular(got) || want.exists() && (got.dev != want.dev || got.ino != want.ino) {
		f.Close()
		return nil, &os.PathError{Op: "remove", Path: path, Err: errChanged}
	}
	if err := tryLock(f); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "lock", Path: path, Err: err}
	}
	reached(stepHoldLocked, path)
	return f, nil
}

// linkBackAt is renameExclAt where the file system has no exclusive
// rename: link(2) fails with EEXIST as wanted, but not for directories.
func linkBackAt(dfd int, from, to string) error {
	if err := unix.Linkat(dfd, from, dfd, to, 0); err != nil {
		return err
	}
	return unix.Unlinkat(dfd, from, 0)
}

// check checks that name is the regular file want; path names it in errors.
func (rm remover) check(name, path string, want fileID) error {
	var st unix.Stat_t
	if err := unix.Fstatat(rm.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	got := statToID(&st)
	if !isRegular(got) {
		return &os.PathError{Op: "remove", Path: path, Err: errNotRegular}
	}
	if got != want {
		return &os.PathError{Op: "remove", Path: path, Err: errChanged}
	}
	return nil
}
