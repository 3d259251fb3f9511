package sessionlocks

// Removing a judged holder's files, under the session's operation lock:
// only the files judged, each set aside, checked and unlinked (remove_*.go).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// maxLoggedRemovals bounds the removals one call logs a line each for;
// past it a session's removals are one summary line.
const maxLoggedRemovals = 100

// remove unlinks name only if it is still the regular file want. A check
// and an unlink by name would race a CLI re-creating the file between the
// two; so the file is first set aside under a name that keeps its own
// (aside.go), checked there, and unlinked only if it is the one judged;
// otherwise it is put back, never over a file that took its name meanwhile.
// A crash between the steps leaves the set-aside file for recover.go.
func (d dirStat) remove(name string, want fileID) error {
	if d.err != nil {
		return d.err
	}
	path := filepath.Join(d.dir, name)
	aside := asideName(name)
	if err := d.setAside(name, aside); err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = fs.ErrNotExist
		case errors.Is(err, fs.ErrExist):
			err = fmt.Errorf("an earlier removal's file is still set aside as %s, which the next listing recovers", aside)
		}
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	reached(stepSetAside, path)
	err := d.check(aside, path, want)
	if err == nil {
		reached(stepChecked, path)
		if err = d.unlink(aside); err == nil {
			reached(stepUnlinked, path)
			return nil
		}
		err = &os.PathError{Op: "remove", Path: path, Err: err}
	}
	if berr := d.restore(aside, name); berr != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &os.PathError{Op: "remove", Path: path, Err: fmt.Errorf("%w; and it could not be put back (%v): it is %s, which the next listing recovers", err, berr, filepath.Join(d.dir, aside))}
	}
	reached(stepPutBack, path)
	return err
}

// removeStale removes a holder judged stale: its .hold first, under its
// own exclusive flock (a CLI that opened it meanwhile either holds the
// flock, and both files stay, or refuses to open), then its .lock.
func removeStale(h Holder, rm dirStat) error {
	reached(stepDecided, h.LockFile)
	if h.holdID.exists() {
		name := filepath.Base(h.HoldFile)
		f, err := rm.lockHold(name, h.holdID)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case errors.Is(err, errLockBusy):
			return &FileError{Op: "remove", Path: h.HoldFile, Err: errors.New("its kernel lock is held now: a process has the session open; nothing was removed")}
		case err != nil:
			fe := fileErr(err).(*FileError)
			fe.Err = fmt.Errorf("%w; nothing was removed", fe.Err)
			return fe
		default:
			defer f.Close()
			if err := rm.remove(name, h.holdID); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fileErr(err)
			}
		}
	}
	return removeLock(h, rm)
}

// removeTaken removes the files of a holder the user decided to take over
// (Force): its .lock, then its .hold, whoever holds its flock.
func removeTaken(h Holder, rm dirStat) error {
	if !h.lockID.exists() && !h.holdID.exists() {
		return &FileError{Op: "remove", Path: h.LockFile, Err: errors.New("its files could not be examined, so nothing was removed")}
	}
	if err := removeLock(h, rm); err != nil {
		return err
	}
	if h.holdID.exists() {
		if err := rm.remove(filepath.Base(h.HoldFile), h.holdID); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fileErr(err)
		}
	}
	return nil
}

func removeLock(h Holder, rm dirStat) error {
	if !h.lockID.exists() {
		return nil
	}
	if err := rm.remove(filepath.Base(h.LockFile), h.lockID); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fileErr(err)
	}
	return nil
}

// fileErr is err as a *FileError.
func fileErr(err error) error {
	var pe *fs.PathError
	var fe *FileError
	switch {
	case errors.As(err, &fe):
		return fe
	case errors.As(err, &pe):
		return &FileError{Op: pe.Op, Path: pe.Path, Err: pe.Err}
	}
	return &FileError{Op: "remove", Err: err}
}
