package sessionlocks

// The two verbs that change the state dir: Reclaim removes what is proven
// stale, Force removes what the user decided to take over. Both act only
// under the CLI's own operation lock, on a judgement made under it, and
// only on files that are still the ones judged. A cancelled call does
// nothing at all, or (once it has begun to act) finishes the holder it is
// on and says what it did.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// opLockWait is how long a mutation waits for the CLI's operation lock. The
// CLI holds it only while it opens a session (milliseconds).
const opLockWait = 500 * time.Millisecond

// maxLoggedRemovals bounds the removals one call logs a line each for (at
// info, with session, pid, verdict and reason); past it a session's
// removals are one summary line: a reclaim of 100,000 dead locks must not
// write 100,000 lines.
const maxLoggedRemovals = 100

// ReclaimOptions say where Reclaim looks and whether it acts.
type ReclaimOptions struct {
	// IDs are the sessions to reclaim in. An empty list selects none: an
	// IDE whose selection filtered down to nothing reclaims nothing.
	IDs []string
	// All reclaims in every session instead of IDs.
	All bool
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
}

// Reclaim removes the files of stale holders (and unlocked orphan .hold
// files) in the sessions opts select.
//
// For each session it takes the CLI's own operation lock, so that no CLI can
// open the session meanwhile, judges every holder afresh, and removes a file
// only if it is still the very file judged stale. Live and unknown holders
// are kept. With DryRun nothing is removed; Reclaimed lists what would go
// (the operation lock is taken only where a young .hold must be probed).
//
// Cancelled before anything was removed, it returns ctx's error and did
// nothing; cancelled after, it stops before the next session and returns
// what it did, with Cancelled set.
func (e *Engine) Reclaim(ctx context.Context, opts ReclaimOptions) (ReclaimResult, error) {
	var res ReclaimResult
	ids := opts.IDs
	if opts.All {
		// Every session with holders; the cached listing only picks the
		// candidates, each one is judged afresh under its lock below.
		all, err := e.List(ctx)
		if err != nil {
			return res, err
		}
		ids = nil
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
		if ctx.Err() != nil {
			break
		}
		e.reclaimOne(ctx, id, opts.DryRun, &res)
	}
	// Cancelled during any session, the last one too: nothing removed is
	// nothing done; otherwise the answer says what was.
	if ctx.Err() != nil {
		if res.Totals.Reclaimed == 0 || opts.DryRun {
			return ReclaimResult{}, ctx.Err()
		}
		res.Cancelled = true
	}
	return res, nil
}

func (e *Engine) reclaimOne(ctx context.Context, id string, dryRun bool, res *ReclaimResult) {
	defer e.InvalidateSession(id)
	// Most sessions a reclaim visits have nothing stale: look first, and
	// take the CLI's operation lock only when there is something to remove,
	// or a young .hold that only a probe under that lock can judge.
	// The look stops at the first holder that needs the lock: in a
	// directory of 100,000 dead locks, the first.
	var kept []Holder
	need, all := false, 0
	var s Session
	ok, err := e.scanVisit(&s, id, false, false, nil, e.decisionSight(false), func(h Holder) bool {
		all++
		need = h.Verdict == Stale || h.Reason == ReasonStarting && h.HoldFile != ""
		if !need && len(kept) < maxListedHolders {
			kept = append(kept, h)
		}
		return !need
	})
	if err != nil || !ok {
		return
	}
	if !need {
		for _, h := range kept {
			res.kept(h)
		}
		res.Totals.Kept += all - len(kept)
		return
	}
	if dryRun {
		// What a reclaim would remove, judged without the lock unless a
		// young .hold needs it to be judged at all.
		var dry ReclaimResult
		unprobed := false
		e.scanVisit(&s, id, false, false, nil, e.decisionSight(false), func(h Holder) bool {
			unprobed = unprobed || h.Reason == ReasonStarting && h.HoldFile != ""
			dry.classify(h)
			return !unprobed
		})
		if !unprobed {
			res.merge(dry)
			return
		}
	}

	unlock, err := e.locks.lock(ctx, id)
	if err != nil {
		return // cancelled: the caller says so
	}
	defer unlock()
	release, err := e.opLock(ctx, id)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		// Report the session's stale holders as not reclaimed, with why.
		e.scanVisit(&s, id, false, false, nil, e.decisionSight(false), func(h Holder) bool {
			if h.Verdict == Stale {
				res.failed(h, err)
			} else {
				res.kept(h)
			}
			return true
		})
		return
	}
	defer release()
	if dryRun {
		// The operation lock was taken only so that young .hold files
		// could be probed: what a real reclaim would remove, nothing more.
		e.classify(id, true, res)
		return
	}
	if ctx.Err() != nil {
		return // cancelled: nothing more is removed (Reclaim says what was)
	}
	// Judged afresh under the lock, each stale holder removed as it is
	// judged: a session of 100,000 holders never holds them all.
	rm := openRemover(filepath.Join(e.dir, id))
	defer rm.close()
	n, logged := 0, 0
	e.scanVisit(&s, id, false, true, nil, e.decisionSight(false), func(h Holder) bool {
		if h.Verdict != Stale {
			res.kept(h)
			return true
		}
		if err := e.removeHolder(h, false, rm); err != nil {
			res.failed(h, err)
			return true
		}
		n++
		if res.Totals.Reclaimed < maxLoggedRemovals {
			logged++
			e.log.Info("reclaimed stale lock", "session", id, "pid", h.PID, "verdict", h.Verdict, "reason", h.Reason, "detail", h.Detail)
		}
		res.reclaimed(h)
		return true
	})
	if n > logged {
		e.log.Info("reclaimed more stale locks", "session", id, "count", n-logged)
	}
}

// classify is a dry run's answer: stale holders would be reclaimed.
func (e *Engine) classify(id string, opLocked bool, res *ReclaimResult) {
	var s Session
	e.scanVisit(&s, id, false, opLocked, nil, e.decisionSight(false), func(h Holder) bool {
		res.classify(h)
		return true
	})
}

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

// ForceOptions say what Force may do beyond removing lock files.
type ForceOptions struct {
	// Terminate sends SIGTERM to each live holder's proven Owner and waits
	// up to Grace for it to exit. An owner still running then keeps its
	// files. Holders without an owner are not signalled (NotSignalled says
	// why); their files are removed, as without Terminate.
	Terminate bool
	// Kill sends SIGKILL, after Grace, to the owners SIGTERM did not stop,
	// and then removes their files once they have exited.
	Kill bool
	// Grace is how long to wait for signalled owners to exit.
	Grace time.Duration
	// Expect, when not empty, is the Token of the judgement the user
	// decided on: Force then acts only if every live or unknown holder it
	// finds is one the token names, and fails with a *ChangedError if not.
	Expect string
}

// Force removes the holders' files of one session, which the user decided
// to take over, under its operation lock. See ForceOptions.
//
// Only holders judged when Force began are removed (with Expect, only those
// the user saw): a holder that appears while Force waits for signalled
// owners to exit is kept. Cancelled before it signals or removes anything,
// Force returns ctx's error and did nothing; after that it ignores ctx and
// finishes, and the result says what it did.
func (e *Engine) Force(ctx context.Context, id string, opts ForceOptions) (ForceResult, error) {
	var res ForceResult
	if err := ValidateID(id); err != nil {
		return res, err
	}
	unlock, err := e.locks.lock(ctx, id)
	if err != nil {
		return res, err
	}
	defer unlock()
	if e.beforeOpLock != nil {
		e.beforeOpLock()
	}
	release, err := e.opLock(ctx, id)
	if err != nil {
		return res, err
	}
	defer func() {
		if release != nil {
			release()
		}
	}()
	// Every holder judged now, listed or not, is one the decision covers.
	decided := map[string]bool{}
	s, err := e.judgeSession(id, false, true, func(h Holder) { decided[holderEntry(id, h)] = true })
	if err != nil {
		return res, err
	}
	if s == nil {
		return res, &NotFoundError{ID: id, Dir: e.dir}
	}
	if opts.Expect != "" && !Admits(opts.Expect, *s) {
		return res, &ChangedError{Session: *s}
	}
	if err := ctx.Err(); err != nil {
		return res, err // the last moment at which cancelling leaves everything as it was
	}
	defer e.InvalidateSession(id)

	running := map[int]bool{}     // signalled owners that have not exited
	signalled := map[string]int{} // holders whose owner was signalled, and that owner
	if opts.Terminate {
		targets := e.terminateOwners(s.Holders, &res)
		for _, h := range s.Holders {
			if h.Owner != nil && slices.Contains(res.Signalled, h.Owner.PID) {
				signalled[holderEntry(id, h)] = h.Owner.PID
			}
		}
		if len(targets) > 0 {
			// The CLI may want the operation lock to clean up as it exits.
			release()
			release = nil
			exited := awaitExits(targets, time.Now().Add(opts.Grace))
			if opts.Kill {
				var killed []*target
				for _, t := range targets {
					if exited[t.pid] {
						continue
					}
					if err := t.kill(); err != nil {
						e.log.Warn("SIGKILL failed", "session", id, "pid", t.pid, "err", err)
						continue
					}
					e.log.Info("sent SIGKILL", "session", id, "pid", t.pid)
					res.Killed = append(res.Killed, t.pid)
					killed = append(killed, t)
				}
				for pid := range awaitExits(killed, time.Now().Add(killWait)) {
					exited[pid] = true
				}
			}
			for _, t := range targets {
				if exited[t.pid] {
					res.Exited = append(res.Exited, t.pid)
				} else {
					res.StillRunning = append(res.StillRunning, t.pid)
					running[t.pid] = true
					e.log.Warn("holder still running after the grace period; its lock files are kept", "session", id, "pid", t.pid, "grace", opts.Grace)
				}
				t.close()
			}
			// Signals are sent: from here on the call finishes, cancelled or
			// not, and answers what it did.
			release, err = e.opLockWithin(context.WithoutCancel(ctx), id, relockWait)
			if err != nil {
				e.log.Warn("cannot take the operation lock again after signalling; no lock file removed", "session", id, "err", err)
				if now, err := e.scanSession(id, false); err == nil && now != nil {
					res.Kept, res.Session = now.Holders, *now
				}
				return res, nil
			}
		}
	}
	// Judged once more, and removed as judged: a session of 100,000
	// holders never holds them all.
	rm := openRemover(filepath.Join(e.dir, id))
	defer rm.close()
	var fresh Session
	var removeErr error
	removed := 0
	ok, err := e.scanVisit(&fresh, id, false, true, nil, e.decisionSight(false), func(h Holder) bool {
		switch {
		case removeErr != nil:
			res.keep(h)
			return true
		case h.Verdict != Stale && !decided[holderEntry(id, h)]:
			e.log.Info("kept a holder that appeared after the decision", "session", id, "pid", h.PID, "verdict", h.Verdict, "reason", h.Reason)
			res.keep(h)
			return true
		case h.Verdict != Stale && (h.Owner != nil && running[h.Owner.PID] || running[signalled[holderEntry(id, h)]]):
			// A signalled owner still running keeps its files: no false
			// "free" while it may write.
			res.keep(h)
			return true
		}
		if err := e.removeHolder(h, true, rm); err != nil {
			removeErr = err
			res.keep(h)
			return true
		}
		if removed++; removed <= maxLoggedRemovals {
			e.log.Info("force-removed lock", "session", id, "pid", h.PID, "verdict", h.Verdict, "reason", h.Reason)
		}
		res.remove(h)
		return true
	})
	if removed > maxLoggedRemovals {
		e.log.Info("force-removed more locks", "session", id, "count", removed-maxLoggedRemovals)
	}
	if err != nil || !ok {
		return res, err
	}
	if removeErr != nil {
		return res, removeErr
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

// killWait is how long Force waits for a SIGKILLed owner to be gone;
// relockWait how long it waits for the operation lock once it has signalled
// (a CLI exiting may hold it a moment).
const (
	killWait   = 2 * time.Second
	relockWait = 5 * time.Second
)

// terminateOwners sends SIGTERM to the proven owner of each live holder
// that may be signalled, and records every live or unknown holder it does
// not signal, with why. The owner is never this process, an ancestor of
// it (the IDE that spawned it), pid 1, the init of a PID namespace, or
// another user's process.
func (e *Engine) terminateOwners(hs []Holder, res *ForceResult) []*target {
	self := os.Getpid()
	uid := os.Getuid()
	protected := ancestors(self)
	var out []*target
	sent := map[int]bool{}
	refuse := func(pid int, why string) {
		res.NotSignalled = append(res.NotSignalled, Refusal{PID: pid, Why: why})
	}
	for _, h := range hs {
		if h.Verdict == Stale {
			continue
		}
		o := h.Owner
		switch {
		case h.Verdict == Unknown:
			refuse(h.PID, "its verdict is unknown, and only a live holder's proven owner is ever signalled")
			continue
		case o == nil:
			refuse(h.PID, "no process is proven to hold this session: "+h.NoOwner)
			continue
		case sent[o.PID]:
			continue // one CLI, two holders (a .lock and an orphan .hold)
		case o.PID == self || protected[o.PID]:
			refuse(h.PID, fmt.Sprintf("pid %d is this sidecar or one of its ancestors (the IDE that started it)", o.PID))
			continue
		case o.PID <= 1 || isNamespaceInit(o.PID):
			refuse(h.PID, fmt.Sprintf("pid %d is the init of a PID namespace: signalling it would stop everything in it", o.PID))
			continue
		case uid >= 0 && o.uid != uid:
			refuse(h.PID, fmt.Sprintf("pid %d belongs to another user (uid %d)", o.PID, o.uid))
			continue
		}
		if e.beforeSignal != nil {
			e.beforeSignal(o)
		}
		t, err := openOwner(o)
		if err != nil {
			refuse(h.PID, err.Error())
			continue
		}
		if err := t.terminate(); err != nil {
			t.close()
			refuse(h.PID, "SIGTERM failed: "+err.Error())
			continue
		}
		e.log.Info("sent SIGTERM", "session", h.SessionID, "pid", o.PID, "verdict", h.Verdict, "reason", h.Reason, "evidence", o.Evidence)
		sent[o.PID] = true
		res.Signalled = append(res.Signalled, o.PID)
		out = append(out, t)
	}
	for _, r := range res.NotSignalled {
		e.log.Info("not signalled", "session", hs[0].SessionID, "pid", r.PID, "why", r.Why) // a refusal means hs is not empty
	}
	return out
}

// isNamespaceInit reports whether pid is pid 1 of the PID namespace it runs in.
func isNamespaceInit(pid int) bool {
	ns, err := nsPIDs(pid)
	return err == nil && ns[len(ns)-1] == 1
}

// ancestors returns this process's ancestors, which are never signalled.
// Parents are processes (thread-group ids), as every pid signalled is.
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
	case p.state == procGone || p.state == procThread:
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
