package sessionlocks

// Force: taking over a session the user decided to take over, under the
// CLI's operation lock: only the holders the user saw (expect), their
// owners signalled if asked and proven right before each signal, never a
// live holder's files removed unless the user took it over without
// stopping it, and nothing once cancelled before acting.

import (
	"context"
	"path/filepath"
	"time"
)

// ForceOptions say what Force may do beyond removing lock files.
type ForceOptions struct {
	// Terminate sends SIGTERM to each live holder's proven Owner and waits
	// up to Grace for it to exit. A live holder is then never removed: one
	// whose owner is not proven is not signalled (NotSignalled says why)
	// and keeps its files, as does one still running after Grace.
	Terminate bool
	// Kill sends SIGKILL, after Grace, to the owners SIGTERM did not stop,
	// each proven again to hold the session right before.
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
			// Signals are sent: from here on the call finishes, cancelled or
			// not, and answers what it did.
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
// Terminate was asked and the holder is not stale now (it was not stopped,
// or whether it still runs cannot be told). A removal that fails is
// recorded and the others go on: the answer says all that was done.
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

// killWait is how long Force waits for a SIGKILLed owner to be gone;
// relockWait how long it waits for the operation lock once it has signalled.
const (
	killWait   = 2 * time.Second
	relockWait = 5 * time.Second
)

// ForceResult says what Force removed and which processes it signalled.
type ForceResult struct {
	Removed []Holder
	// Kept are the holders whose files Force left: a signalled owner still
	// running after the grace period, or a holder that appeared after the
	// session was judged (see ForceOptions.Expect).
	Kept []Holder
	// RemovedOmitted and KeptOmitted count the holders beyond the first
	// 1,000 of each list.
	RemovedOmitted, KeptOmitted int
	// Signalled are the owners sent SIGTERM; Exited those of them that
	// exited; StillRunning those that had not when Force gave up waiting
	// (after SIGKILL too, with Kill). Killed are the ones sent SIGKILL.
	Signalled, Exited, StillRunning, Killed []int
	// NotSignalled are the live and unknown holders Terminate did not
	// signal, each with why.
	NotSignalled []Refusal
	// Failed are the holders whose files could not be removed, each with
	// why: once Force has signalled or removed something, a failure is told
	// here, not as the call's error.
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
