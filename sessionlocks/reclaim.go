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
	IDs    []string // the sessions to reclaim in; none selects none
	All    bool     // every session instead of IDs
	DryRun bool     // report what would be removed, and remove nothing
}

// Reclaim removes the files of stale holders in the sessions opts select:
// for each, under the CLI's own operation lock, it judges every holder
// afresh and removes a file only if it is still the very file judged stale.
// Cancelled before anything was removed, it returns ctx's error and did
// nothing; cancelled after, it stops before the next session and returns
// what it did, with Cancelled set.
func (e *Engine) Reclaim(ctx context.Context, opts ReclaimOptions) (ReclaimResult, error) {
	res := ReclaimResult{DryRun: opts.DryRun}
	ids, err := e.reclaimIDs(ctx, opts)
	if err != nil {
		return res, err
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		e.reclaimOne(ctx, id, opts.DryRun, &res)
	}
	if ctx.Err() != nil {
		if res.Totals.Reclaimed == 0 || opts.DryRun {
			return ReclaimResult{}, ctx.Err()
		}
		res.Cancelled = true
	}
	return res, nil
}

// reclaimIDs are the sessions opts select: every session with holders, or
// the ids given, each of which must exist.
func (e *Engine) reclaimIDs(ctx context.Context, opts ReclaimOptions) ([]string, error) {
	if opts.All {
		all, err := e.List(ctx, ListOptions{})
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, s := range all {
			if len(s.Holders) > 0 {
				ids = append(ids, s.ID)
			}
		}
		return ids, nil
	}
	for _, id := range opts.IDs {
		if err := ValidateID(id); err != nil {
			return nil, err
		}
	}
	for _, id := range opts.IDs {
		dir := filepath.Join(e.dir, id)
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, &FileError{Op: "lstat", Path: dir, Err: err}
			}
			return nil, &NotFoundError{ID: id, Dir: e.dir}
		}
	}
	return opts.IDs, nil
}

// needsLock says a holder can be reclaimed, or judged at all, only under
// the operation lock: it is stale, or a young .hold not yet probed.
func needsLock(h Holder) bool {
	return h.Verdict == Stale || h.Reason == ReasonStarting && h.HoldFile != ""
}

func (e *Engine) reclaimOne(ctx context.Context, id string, dryRun bool, res *ReclaimResult) {
	defer e.Invalidate(id)
	p := e.platform()
	// Look first, and take the operation lock only where there is something
	// to remove, or a young .hold to probe; the look stops at the first such
	// holder. A dry run's look is its answer where it can be.
	var look ReclaimResult
	need, unprobed := false, false
	e.readSession(ctx, id, scan{decision: true, dryRun: dryRun}, p, func(h Holder) bool {
		need = need || needsLock(h)
		unprobed = unprobed || h.Reason == ReasonStarting && h.HoldFile != ""
		look.classify(h)
		return dryRun || !need
	})
	if !need || dryRun && !unprobed {
		res.merge(look)
		return
	}
	release, err := e.lockSession(ctx, id)
	if err != nil {
		if ctx.Err() == nil {
			// Busy: the stale holders are reported as not reclaimed, with why.
			e.readSession(ctx, id, scan{decision: true}, p, func(h Holder) bool {
				if h.Verdict == Stale {
					res.failed(h, err)
				} else {
					res.kept(h)
				}
				return true
			})
		}
		return
	}
	defer release()
	if ctx.Err() != nil {
		return // cancelled: nothing more is removed (Reclaim says what was)
	}
	rm := openDirStat(filepath.Join(e.dir, id))
	defer rm.close()
	removed, logged := 0, 0
	e.readSession(ctx, id, scan{decision: true, opLocked: true, dryRun: dryRun}, p, func(h Holder) bool {
		if dryRun || h.Verdict != Stale {
			res.classify(h)
			return true
		}
		if err := removeStale(h, rm); err != nil {
			res.failed(h, err)
			return true
		}
		if removed++; res.Totals.Reclaimed < maxLoggedRemovals {
			logged++
			e.log.Info("reclaimed stale lock", "session", id, "pid", h.PID, "verdict", h.Verdict, "reason", h.Reason, "detail", h.Detail)
		}
		res.reclaimed(h)
		return true
	})
	if removed > logged {
		e.log.Info("reclaimed more stale locks", "session", id, "count", removed-logged)
	}
}

// ReclaimResult says what Reclaim removed, kept and failed to remove.
type ReclaimResult struct {
	// The lists hold at most 1,000 holders each; Totals counts them all.
	Reclaimed []Holder
	Kept      []Holder
	Failed    []Failure
	Totals    ReclaimTotals
	Cancelled bool // cancelled after it had removed something
	DryRun    bool // nothing was removed: Reclaimed is what would have been
}

// ReclaimTotals count the holders, listed or not.
type ReclaimTotals struct{ Reclaimed, Kept, Failed int }

func (r *ReclaimResult) reclaimed(h Holder) {
	r.Totals.Reclaimed++
	appendCapped(&r.Reclaimed, h)
}

func (r *ReclaimResult) kept(h Holder) {
	r.Totals.Kept++
	appendCapped(&r.Kept, h)
}

// classify records what a dry run would do with h.
func (r *ReclaimResult) classify(h Holder) {
	if h.Verdict == Stale {
		r.reclaimed(h)
	} else {
		r.kept(h)
	}
}

// merge adds o to r.
func (r *ReclaimResult) merge(o ReclaimResult) {
	for _, h := range o.Reclaimed {
		r.reclaimed(h)
	}
	for _, h := range o.Kept {
		r.kept(h)
	}
	for _, f := range o.Failed {
		r.failed(f.Holder, f.Err)
	}
	r.Totals.Reclaimed += o.Totals.Reclaimed - len(o.Reclaimed)
	r.Totals.Kept += o.Totals.Kept - len(o.Kept)
	r.Totals.Failed += o.Totals.Failed - len(o.Failed)
}

func (r *ReclaimResult) failed(h Holder, err error) {
	r.Totals.Failed++
	appendCapped(&r.Failed, Failure{Holder: h, Err: err})
}

// Failure pairs a holder with the reason its files were not removed.
type Failure struct {
	Holder Holder
	Err    error
}
