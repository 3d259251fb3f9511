package sessionlocks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// opLockWait is how long a mutation waits for the CLI's operation lock. The
// CLI holds it only while it opens a session (milliseconds).
const opLockWait = 500 * time.Millisecond

// Reclaim removes the files of stale holders (and unlocked orphan .hold
// files) in the named sessions, or in every session when ids is empty.
//
// For each session it takes the CLI's own operation lock, so that no CLI can
// open the session meanwhile, judges every holder afresh, and removes a file
// only if it is still the very file judged stale. Live and unknown holders
// are kept. With dryRun nothing is removed; Reclaimed lists what would go
// (the operation lock is taken only where a young .hold must be probed).
func (e *Engine) Reclaim(ctx context.Context, ids []string, dryRun bool) (ReclaimResult, error) {
	var res ReclaimResult
	if len(ids) == 0 {
		// Every session with holders; the cached listing only picks the
		// candidates, each one is judged afresh under its lock below.
		all, err := e.List(ctx)
		if err != nil {
			return res, err
		}
		for _, s := range all {
			if len(s.Holders) > 0 {
				ids = append(ids, s.ID)
			}
		}
	} else {
		for _, id := range ids {
			if err := ValidateID(id); err != nil {
				return res, err
			}
		}
		// Fail fast on a missing session before touching anything.
		for _, id := range ids {
			if fi, err := os.Lstat(filepath.Join(e.dir, id)); err != nil || !fi.IsDir() {
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return res, &FileError{Op: "lstat", Path: filepath.Join(e.dir, id), Err: err}
				}
				return res, &NotFoundError{ID: id, Dir: e.dir}
			}
		}
	}
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		e.reclaimOne(ctx, id, dryRun, &res)
	}
	return res, nil
}

func (e *Engine) reclaimOne(ctx context.Context, id string, dryRun bool, res *ReclaimResult) {
	defer e.InvalidateSession(id)
	// Most sessions a reclaim visits have nothing stale: look first, and
	// take the CLI's operation lock only when there is something to remove,
	// or a young .hold that only a probe under that lock can judge.
	s, err := e.scanSession(id, false)
	if err != nil || s == nil {
		return
	}
	if !hasStale(s.Holders) && !hasUnprobedHold(s.Holders) {
		res.Kept = append(res.Kept, s.Holders...)
		return
	}
	if dryRun && !hasUnprobedHold(s.Holders) {
		classify(s.Holders, res)
		return
	}

	unlock := e.locks.lock(id)
	defer unlock()
	release, err := e.opLock(ctx, id)
	if err != nil {
		// Report the session's stale holders as not reclaimed, with why.
		for _, h := range s.Holders {
			if h.Verdict == Stale {
				res.Failed = append(res.Failed, ReclaimFailure{Holder: h, Err: err})
			} else {
				res.Kept = append(res.Kept, h)
			}
		}
		return
	}
	defer release()

	if s, err = e.scanLocked(id); err != nil || s == nil {
		return
	}
	if dryRun {
		// The operation lock was taken only so that young .hold files
		// could be probed: what a real reclaim would remove, nothing more.
		classify(s.Holders, res)
		return
	}
	for _, h := range s.Holders {
		if h.Verdict != Stale {
			res.Kept = append(res.Kept, h)
			continue
		}
		if err := e.removeHolder(h, false); err != nil {
			res.Failed = append(res.Failed, ReclaimFailure{Holder: h, Err: err})
			continue
		}
		e.log.Info("reclaimed stale lock", "session", id, "pid", h.PID, "reason", h.Reason)
		res.Reclaimed = append(res.Reclaimed, h)
	}
}

// classify is a dry run's answer: stale holders would be reclaimed.
func classify(hs []Holder, res *ReclaimResult) {
	for _, h := range hs {
		if h.Verdict == Stale {
			res.Reclaimed = append(res.Reclaimed, h)
		} else {
			res.Kept = append(res.Kept, h)
		}
	}
}

// removeHolder deletes a holder's .lock and .hold, each only if it is still
// the file that was judged. A .hold is deleted only if it is unlocked, unless
// force is set. The caller holds the session's operation lock.
func (e *Engine) removeHolder(h Holder, force bool) error {
	dir := filepath.Dir(h.LockFile)
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
		if err := removeInDir(dir, filepath.Base(h.LockFile), h.lockID); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fileErr(err)
		}
	}
	if removeHold {
		if err := removeInDir(dir, filepath.Base(h.HoldFile), h.holdID); err != nil && !errors.Is(err, fs.ErrNotExist) {
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

// Force removes every holder's files of one session under its operation lock.
// With terminate it first sends SIGTERM to each live holder that is verified
// as the lock's writer, owned by this user, not pid 1 and not this process or
// one of its ancestors, and waits up to grace for them to exit. Unknown
// holders are never signalled.
func (e *Engine) Force(ctx context.Context, id string, terminate bool, grace time.Duration) (ForceResult, error) {
	var res ForceResult
	s, err := e.Session(ctx, id)
	if err != nil {
		return res, err
	}
	unlock := e.locks.lock(id)
	defer unlock()
	defer e.InvalidateSession(id)

	if terminate {
		// Signal and wait before taking the operation lock: a CLI shutting
		// down may want that lock to clean up after itself.
		res.Terminated = e.terminateHolders(ctx, s.Holders, grace)
	}

	release, err := e.opLock(ctx, id)
	if err != nil {
		return res, err
	}
	defer release()
	fresh, err := e.scanLocked(id)
	if err != nil {
		return res, err
	}
	if fresh == nil {
		return res, &NotFoundError{ID: id, Dir: e.dir}
	}
	for _, h := range fresh.Holders {
		if err := e.removeHolder(h, true); err != nil {
			return res, err
		}
		e.log.Info("force-removed lock", "session", id, "pid", h.PID, "verdict", h.Verdict, "reason", h.Reason)
		res.Removed = append(res.Removed, h)
	}
	after, err := e.scanLocked(id)
	if err != nil {
		return res, err
	}
	if after != nil {
		res.Session = *after
	}
	return res, nil
}

func (e *Engine) terminateHolders(ctx context.Context, hs []Holder, grace time.Duration) []int {
	self := os.Getpid()
	uid := os.Getuid()
	protected := ancestors(self)
	var sent []int
	for _, h := range hs {
		switch {
		case h.Verdict != Live || !h.WriterVerified || h.Process == nil:
			continue
		case h.PID <= 1 || h.PID == self || protected[h.PID]:
			e.log.Warn("not terminating a protected process", "pid", h.PID)
			continue
		case uid >= 0 && h.Process.UID != uid:
			e.log.Warn("not terminating another user's process", "pid", h.PID, "uid", h.Process.UID)
			continue
		}
		// Re-check right before signalling: still the same process?
		if p := readProc(h.PID); p.state != procAlive || !SameStart(p.start, h.Process.StartedAt) {
			continue
		}
		if err := terminate(h.PID); err != nil {
			e.log.Warn("SIGTERM failed", "pid", h.PID, "err", err)
			continue
		}
		e.log.Info("sent SIGTERM", "pid", h.PID, "session", h.SessionID)
		sent = append(sent, h.PID)
	}
	var exited []int
	deadline := time.Now().Add(grace)
	for _, pid := range sent {
		for {
			if p := readProc(pid); p.state == procGone || p.state == procZombie {
				exited = append(exited, pid)
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				e.log.Warn("holder did not exit within the grace period", "pid", pid, "grace", grace)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return exited
}

// ancestors returns this process's ancestors, which are never signalled.
func ancestors(pid int) map[int]bool {
	out := map[int]bool{}
	for i := 0; i < 64 && pid > 1; i++ {
		p := readProc(pid)
		if p.ppid <= 0 || out[p.ppid] {
			break
		}
		out[p.ppid] = true
		pid = p.ppid
	}
	return out
}

// opLock takes session-state/.session-operation-locks/<id>.lock as the CLI
// does (creating it if absent), retrying for up to opLockWait. While we hold
// it, a CLI opening this session waits and retries every ~27 ms.
func (e *Engine) opLock(ctx context.Context, id string) (release func(), err error) {
	dir := filepath.Join(e.dir, ".session-operation-locks")
	if err := os.Mkdir(dir, 0o700); err == nil {
		ownLikeStateDir(dir, e.dir)
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, &FileError{Op: "mkdir", Path: dir, Err: err}
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = errNotRegular
		}
		return nil, &FileError{Op: "open", Path: dir, Err: fmt.Errorf("not a directory: %w", err)}
	}
	path := filepath.Join(dir, id+".lock")
	_, statErr := os.Lstat(path)
	f, err := openLockFile(path)
	if err != nil {
		return nil, &FileError{Op: "open", Path: path, Err: err}
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		ownLikeStateDir(path, e.dir)
	}
	deadline := time.Now().Add(opLockWait)
	for {
		err := tryLock(f)
		if err == nil {
			return func() { unlockFile(f); f.Close() }, nil
		}
		if !errors.Is(err, errLockBusy) {
			f.Close()
			return nil, &FileError{Op: "lock", Path: path, Err: err}
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w (%s, waited %s)", ErrBusy, path, opLockWait)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// SameStart reports whether two start times read for a pid at different
// moments describe the same process. Start times are offsets from a boot
// instant that is recomputed from two clocks at each read, so they jitter by
// microseconds; two processes that share a pid start far further apart.
func SameStart(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return false
	}
	d := a.Sub(b)
	return -sameStartSlack < d && d < sameStartSlack
}

const sameStartSlack = 20 * time.Millisecond

// ProcessStart returns the start time of pid, so that a watcher that opened a
// handle on pid can confirm it is still the process a lock named.
func ProcessStart(pid int) (time.Time, error) {
	p := readProc(pid)
	switch {
	case p.state == procGone:
		return time.Time{}, fmt.Errorf("pid %d is not running", pid)
	case p.start.IsZero():
		if p.err != nil {
			return time.Time{}, p.err
		}
		return time.Time{}, fmt.Errorf("pid %d: start time unknown", pid)
	}
	return p.start, nil
}

func hasStale(hs []Holder) bool {
	for _, h := range hs {
		if h.Verdict == Stale {
			return true
		}
	}
	return false
}

// hasUnprobedHold reports a young holder whose .hold judging left alone:
// under the operation lock it can be probed, and may turn out stale.
func hasUnprobedHold(hs []Holder) bool {
	for _, h := range hs {
		if h.Reason == ReasonStarting && h.HoldFile != "" {
			return true
		}
	}
	return false
}
