package sessionlocks

// Force: taking over a session the user decided to take over, under the
// CLI's operation lock: only the holders the user saw (expect), their
// owners signalled if asked, and nothing once cancelled before acting.

import (
	"context"
	"path/filepath"
	"slices"
	"time"
)

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
	defer e.invalidateSession(id, true)

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
