package sessionlocks

// Reclaim: removing what is proven stale, session by session, under the
// CLI's own operation lock and on a judgement made under it.

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

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
		all, err := e.List(ctx, ListOptions{})
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
	defer e.invalidateSession(id, true)
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

	unlock, err := e.locks.Lock(ctx, id)
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
