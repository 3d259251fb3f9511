package sessionlocks

// Removing a judged holder's files, as both Reclaim and Force do: only the
// files judged (checked again under the operation lock), and a .hold only if
// nobody holds its lock, unless the user decided otherwise.

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// maxLoggedRemovals bounds the removals one call logs a line each for (at
// info, with session, pid, verdict and reason); past it a session's
// removals are one summary line: a reclaim of 100,000 dead locks must not
// write 100,000 lines.
const maxLoggedRemovals = 100

// removeHolder deletes a holder's .lock and .hold, each only if it is still
// the file that was judged, through rm (the holder's session directory). A
// .hold is deleted only if it is unlocked, unless force is set. The caller
// holds the session's operation lock.
func (e *Engine) removeHolder(h Holder, force bool, rm remover) error {
	removeHold := h.HoldFile != "" && h.holdID.exists()
	// Every precondition is checked before anything is unlinked: a .lock
	// removed beside a .hold that turns out to be held would leave a live
	// CLI without its lock.
	if removeHold && !force && !h.holdFree {
		// Judging did not find it free. The caller holds the session's
		// operation lock, so no CLI is opening the session and a probe now
		// cannot get in a starting CLI's way.
		if hp := probeHold(h.HoldFile, h.holdID); hp.err != nil || hp.held {
			why := "its kernel lock is held"
			if hp.err != nil {
				why = "its kernel lock could not be probed: " + hp.err.Error()
			}
			return &FileError{Op: "remove", Path: h.HoldFile, Err: errors.New(why + "; nothing was removed")}
		}
	}
	if h.lockID.exists() {
		if err := rm.remove(filepath.Base(h.LockFile), h.lockID); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fileErr(err)
		}
	}
	if removeHold {
		if err := rm.remove(filepath.Base(h.HoldFile), h.holdID); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fileErr(err)
		}
	}
	return nil
}

func fileErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &FileError{Op: pe.Op, Path: pe.Path, Err: pe.Err}
	}
	return err
}
