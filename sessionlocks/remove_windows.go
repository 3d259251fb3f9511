package sessionlocks

// Removal on Windows: by path, as Unix does by descriptor: rename aside,
// check, delete, or put back without replacing anything.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/copilot-ide/sessionlocks/internal/shareopen"
	"golang.org/x/sys/windows"
)

// setAside renames name to aside; aside is a name no other process makes.
func (d dirStat) setAside(name, aside string) error {
	to := filepath.Join(d.dir, aside)
	err := moveNoReplace(filepath.Join(d.dir, name), to)
	if err == nil {
		unlinked.Delete(to) // the same name again: this one is not deleted yet
	}
	return err
}

// restore renames from to to, failing rather than replace a file at to.
func (d dirStat) restore(from, to string) error {
	err := moveNoReplace(filepath.Join(d.dir, from), filepath.Join(d.dir, to))
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_FILE_EXISTS) {
		return fs.ErrExist
	}
	return err
}

// unlink deletes name, which Windows shows until its holder closes it (see
// unlinked).
func (d dirStat) unlink(name string) error {
	p := filepath.Join(d.dir, name)
	if err := os.Remove(p); err != nil {
		return err.(*os.PathError).Err
	}
	markUnlinked(p)
	return nil
}

func (d dirStat) names() ([]string, error) {
	f, err := shareopen.Open(d.dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// lockHold opens the regular file name, checks it is want (a zero want
// checks nothing more), and takes its exclusive lock without waiting.
// Closing the file releases the lock.
func (d dirStat) lockHold(name string, want fileID) (*os.File, error) {
	path := filepath.Join(d.dir, name)
	f, id, err := openNoFollow(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if want.exists() && !sameFile(want, id) {
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

// check checks that name is the regular file want; path names it in errors.
func (d dirStat) check(name, path string, want fileID) error {
	fi, err := os.Lstat(filepath.Join(d.dir, name))
	if err != nil {
		return &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return &os.PathError{Op: "remove", Path: path, Err: errNotRegular}
	}
	// Type, size and time only: FAT numbers a file by its directory entry,
	// so the rename aside gives it another file index.
	got := fileIDOf(fi)
	got.dev, got.ino = want.dev, want.ino
	if got != want {
		return &os.PathError{Op: "remove", Path: path, Err: errChanged}
	}
	return nil
}

// moveNoReplace renames from to to, failing if to exists (os.Rename would
// replace it).
func moveNoReplace(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	t, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	return windows.MoveFileEx(f, t, 0)
}
