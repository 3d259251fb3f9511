package sessionlocks

// Force: taking over a session the user decided to take over, under the
// CLI's operation lock: only the holders the user saw (expect), their
// owners signalled if asked and proven right before each signal, and
// nothing done once cancelled before acting.

import (
	"context"
	"path/filepath"
	"time"
)

// ForceOptions say what Force may do beyond removing lock files.
type ForceOptions struct {
	// Terminate sends SIGTERM to each live holder's proven Owner and waits
	// up to Grace for it to exit. A live holder not stopped (its owner not
	// proven, or still running after Grace) keeps its files.
	Terminate bool
	// Kill sends SIGKILL, after Grace, to the owners SIGTERM did not stop,
	// each proven again to hold the session right before.
	Kill  bool
	Grace time.Duration
	// Expect, when not empty, is the Token of the judgement the user
	// decided on: Force fails with a *ChangedError if a live or unknown
	// holder it finds is not named by it.
	Expect string
}

// Force removes the holders' files of one session, which the user decided
// to take over, under its operation lock. Only holders judged when Force
// began are removed: one that appears while it waits for signalled owners
// is kept. Cancelled before it signals or removes anything, Force returns
// ctx's error and did nothing; after that it finishes, and the result says
// what it did.
func (e *Engine) Force(ctx context.Context, id string, opts ForceOptions) (ForceResult, error) {
	var res ForceResult
	if err := ValidateID(id); err != nil {
		return res, err
	}
	unlock, err := e.locks.Lock(ctx, id)
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
	s, err := e.judgeSession(ctx, id, scan{decision: true, prove: true, opLocked: true}, func(h Holder) { decided[holderEntry(id, h)] = true })
	if err != nil {
		return res, err
	}
	if opts.Expect != "" && !Admits(opts.Expect, s) {
		return res, &ChangedError{Session: s}
	}
	if err := ctx.Err(); err != nil {
		return res, err // the last moment at which cancelling leaves everything as it was
	}
	defer e.Invalidate(id)
	if opts.Terminate {
		if targets := e.terminateOwners(s.Holders, opts.Kill, &res); len(targets) > 0 {
			// The CLI may want the operation lock to clean up as it exits.
			release()
			release = nil
			e.awaitTargets(id, targets, opts, &res)
			// Signals are sent: the call finishes, cancelled or not.
			if release, err = e.opLockWithin(context.WithoutCancel(ctx), id, relockWait); err != nil {
				e.log.Warn("cannot take the operation lock again after signalling; no lock file removed", "session", id, "err", err)
				if now, err := e.judgeSession(ctx, id, scan{decision: true}, nil); err == nil {
					res.Kept, res.Session = now.Holders, now
				}
				return res, nil
			}
		}
	}
	if err := e.forceRemove(ctx, id, opts, decided, &res); err != nil {
		return res, err
	}
	if len(res.Failed) > 0 && len(res.Removed) == 0 && len(res.Signalled)+len(res.Killed) == 0 {
		return res, res.Failed[0].Err // nothing was done: the error says why
	}
	after, err := e.judgeSession(ctx, id, scan{decision: true, opLocked: true}, nil)
	if err != nil {
		return res, err
	}
	res.Session = after
	return res, nil
}

// forceRemove judges the session once more and removes what Force may:
// stale holders as Reclaim does; the holders the decision covered, unless
// Terminate was asked and the holder is not stale now. A removal that
// fails is recorded and the others go on.
func (e *Engine) forceRemove(ctx context.Context, id string, opts ForceOptions, decided map[string]bool, res *ForceResult) error {
	rm := openDirStat(filepath.Join(e.dir, id))
	defer rm.close()
	removed := 0
	_, err := e.judgeSession(ctx, id, scan{decision: true, opLocked: true}, func(h Holder) {
		switch {
		case h.Verdict != Stale && !decided[holderEntry(id, h)]:
			e.log.Info("kept a holder that appeared after the decision", "session", id, "pid", h.PID, "verdict", h.Verdict, "reason", h.Reason)
			res.keep(h)
			return
		case h.Verdict != Stale && opts.Terminate:
			// Not stopped: no false "free" while it may write.
			res.keep(h)
			return
		}
		remove := removeTaken
		if h.Verdict == Stale {
			remove = removeStale
		}
		if err := remove(h, rm); err != nil {
			e.log.Warn("a lock Force was to remove could not be", "session", id, "pid", h.PID, "err", err)
			res.fail(h, err)
			return
		}
		if removed++; removed <= maxLoggedRemovals {
			e.log.Info("force-removed lock", "session", id, "pid", h.PID, "verdict", h.Verdict, "reason", h.Reason)
		}
		res.remove(h)
	})
	if removed > maxLoggedRemovals {
		e.log.Info("force-removed more locks", "session", id, "count", removed-maxLoggedRemovals)
	}
	return err
}

const (
	killWait   = 2 * time.Second // for a SIGKILLed owner to be gone
	relockWait = 5 * time.Second // for the operation lock once Force has signalled
)

// ForceResult says what Force removed and which processes it signalled.
type ForceResult struct {
	Removed []Holder
	Kept    []Holder // the holders whose files Force left (not stopped, or new)
	// RemovedOmitted and KeptOmitted count those beyond the first 1,000.
	RemovedOmitted, KeptOmitted int
	// Signalled are the owners sent SIGTERM; Exited those of them that
	// exited; StillRunning those that had not when Force gave up waiting.
	// Killed are the ones sent SIGKILL.
	Signalled, Exited, StillRunning, Killed []int
	// NotSignalled are the live and unknown holders not signalled, with why.
	NotSignalled []Refusal
	// Failed are the holders whose files could not be removed: once Force
	// has done something, a failure is told here, not as the call's error.
	Failed  []Failure
	Session Session
}

func (r *ForceResult) remove(h Holder) {
	if !appendCapped(&r.Removed, h) {
		r.RemovedOmitted++
	}
}

func (r *ForceResult) fail(h Holder, err error) {
	r.keep(h)
	appendCapped(&r.Failed, Failure{Holder: h, Err: err})
}

func (r *ForceResult) keep(h Holder) {
	if !appendCapped(&r.Kept, h) {
		r.KeptOmitted++
	}
}

// Refusal is a holder Force did not signal, and why.
type Refusal struct {
	PID int
	Why string
}
