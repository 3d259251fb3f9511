package sessionlocks

// Removing a judged holder's files, under the session's operation lock:
// only the files judged, each set aside, checked and unlinked (remove_*.go).

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// maxLoggedRemovals bounds the removals one call logs a line each for (at
// info, with session, pid, verdict and reason); past it a session's
// removals are one summary line: a reclaim of 100,000 dead locks must not
// write 100,000 lines.
const maxLoggedRemovals = 100

// removeStale removes a holder judged stale: its .hold first, its own
// exclusive flock taken before and released after (a CLI that opened the
// same file meanwhile either holds the flock, and then both files stay, or
// cannot take it and refuses to open), then its .lock.
func removeStale(h Holder, rm remover) error {
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
func removeTaken(h Holder, rm remover) error {
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

func removeLock(h Holder, rm remover) error {
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
