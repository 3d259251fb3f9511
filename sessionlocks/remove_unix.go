//go:build unix

package sessionlocks

// Removal on Unix: every name resolved relative to the session directory's
// descriptor, opened without following links; rename, check, unlink.

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// setAside renames name to aside, failing rather than replace a file an
// earlier removal of this process left there.
func (d dirStat) setAside(name, aside string) error { return renameExclAt(d.fd, name, aside) }

// restore renames from to to, failing rather than replace a file at to.
func (d dirStat) restore(from, to string) error { return renameExclAt(d.fd, from, to) }

func (d dirStat) unlink(name string) error { return unix.Unlinkat(d.fd, name, 0) }

// names lists the directory's entries.
func (d dirStat) names() ([]string, error) {
	if d.err != nil {
		return nil, d.err
	}
	fd, err := unix.Dup(d.fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), d.dir)
	defer f.Close()
	return f.Readdirnames(-1)
}

// lockHold opens the regular file name, checks it is want (a zero want
// checks nothing more), and takes its exclusive flock without waiting,
// errLockBusy if a CLI has it. Closing the file releases the lock.
func (d dirStat) lockHold(name string, want fileID) (*os.File, error) {
	if d.err != nil {
		return nil, d.err
	}
	path := filepath.Join(d.dir, name)
	fd, got, err := openRegular(d.fd, name)
	switch {
	case err == nil && want.exists() && (got.dev != want.dev || got.ino != want.ino):
		unix.Close(fd)
		fallthrough
	case err == errNotRegular && got.exists():
		return nil, &os.PathError{Op: "remove", Path: path, Err: errChanged}
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
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
func (d dirStat) check(name, path string, want fileID) error {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
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
