package sessionlocks

// Removal on Windows: by path, as Unix does by descriptor: rename aside,
// check, delete, or put back without replacing anything.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/copilot-ide/sessionlocks/internal/shareopen"
	"golang.org/x/sys/windows"
)

// remover removes files of one session directory.
type remover struct{ dir string }

func openRemover(dir string) remover { return remover{dir} }

func (rm remover) close() {}

// remove deletes name only if it is still the regular file want: set aside
// under a name that keeps its own (aside.go), checked there, deleted only
// if it is the one judged, otherwise put back (never replacing a file that
// took the name meanwhile).
func (rm remover) remove(name string, want fileID) error {
	path := filepath.Join(rm.dir, name)
	aside := asideName(name)
	if err := moveNoReplace(path, filepath.Join(rm.dir, aside)); err != nil {
		if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) || errors.Is(err, windows.ERROR_PATH_NOT_FOUND) {
			return &os.PathError{Op: "remove", Path: path, Err: fs.ErrNotExist}
		}
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	unlinked.Delete(filepath.Join(rm.dir, aside)) // the same name again: this one is not deleted yet
	reached(stepSetAside, path)
	err := checkFile(filepath.Join(rm.dir, aside), path, want)
	if err == nil {
		reached(stepChecked, path)
		if err = os.Remove(filepath.Join(rm.dir, aside)); err == nil {
			markUnlinked(filepath.Join(rm.dir, aside)) // shown until its holder closes it
			reached(stepUnlinked, path)
			return nil
		}
	}
	if berr := rm.restore(aside, name); berr != nil {
		return &os.PathError{Op: "remove", Path: path, Err: fmt.Errorf("%w; and it could not be put back (%v): it is %s, which the next listing recovers", err, berr, filepath.Join(rm.dir, aside))}
	}
	reached(stepPutBack, path)
	return err
}

// restore renames from to to, failing rather than replace a file at to.
func (rm remover) restore(from, to string) error {
	err := moveNoReplace(filepath.Join(rm.dir, from), filepath.Join(rm.dir, to))
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) || errors.Is(err, windows.ERROR_FILE_EXISTS) {
		return fs.ErrExist
	}
	return err
}

func (rm remover) unlink(name string) error { return os.Remove(filepath.Join(rm.dir, name)) }

func (rm remover) names() ([]string, error) {
	f, err := shareopen.Open(rm.dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// lockHold opens the regular file name, checks it is want (a zero want
// checks nothing but that), and takes its exclusive lock without waiting:
// held from before a removal's check until after its deletion. Closing the
// file releases the lock.
func (rm remover) lockHold(name string, want fileID) (*os.File, error) {
	path := filepath.Join(rm.dir, name)
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

func checkFile(p, path string, want fileID) error {
	fi, err := os.Lstat(p)
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
