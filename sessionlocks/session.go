package sessionlocks

// One session read with its holders judged: for a listing (caches allowed)
// or for a decision (Judge: nothing cached, owners proven, a token).

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"time"
)

// scan says how one session is read.
type scan struct {
	cached     bool // a listing: snapshots and verdicts may be reused and are kept
	decision   bool // a user acts on it (see judgeOpts)
	prove      bool // a decision that shows or signals owners: each live holder's is proven
	opLocked   bool // the caller holds the session's operation lock
	recovering bool // recover.go judges what it put back: no recovery within
	dryRun     bool // a dry run: recovery puts back, and removes nothing
}

// readSession reads session id and judges every holder, visiting each in
// pid order until visit returns false; found is false when there is no such
// session directory. One holding a set-aside file is recovered first.
func (e *Engine) readSession(ctx context.Context, id string, how scan, p Platform, visit func(Holder) bool) (s Session, found bool, err error) {
	dir := filepath.Join(e.dir, id)
	var prev *dirSnapshot
	if how.cached {
		prev = e.caches.snapshot(id)
	}
	gen := e.caches.generation()
	snap, err := e.readSessionDir(dir, prev)
	var waiting []identity
	if err == nil && snap.aside && !how.recovering && (!how.cached || e.recoveryDue(id, snap)) {
		var rerr error
		if waiting, rerr = e.recoverSession(ctx, id, how); rerr == nil {
			snap, err = e.readSessionDir(dir, nil)
		} else if ctx.Err() != nil {
			return s, false, ctx.Err()
		} else {
			e.log.Warn("a removal's set-aside file could not be recovered yet", "session", id, "err", rerr)
		}
	}
	if err != nil {
		return s, false, e.sessionDirErr(dir, err)
	}
	if how.cached {
		e.caches.keepSnapshot(id, snap, gen)
	}
	s = sessionOf(id, dir, snap)
	o := e.optsFor(snap, p)
	o.decision, o.prove, o.opLocked = how.decision, how.prove, how.opLocked
	var n tally
	e.walk(id, snap, o, how.cached, func(h Holder) bool {
		n.add(h.Verdict)
		if !appendCapped(&s.Holders, h) {
			s.HoldersOmitted++
		}
		return visit == nil || visit(h)
	})
	n.apply(&s)
	if snap.aside && how.cached {
		e.unrecovered.Store(id, unrecovered{snap.dir, time.Now(), waiting})
	}
	if snap.aside && !how.recovering && (s.State == StateFree || s.State == StateStale) {
		// A removal under way or not recovered yet: its file may be a live CLI's.
		s.State = StateUnknown
	}
	return s, true, nil
}

// unrecovered is a session directory whose set-aside files recovery left
// (a remover still running, a file it cannot put back), as it was then.
type unrecovered struct {
	dir     fileID
	at      time.Time
	waiting []identity // the removers whose work was left alone
}

// recoveryDue says whether a listing recovers session id, whose snap shows
// set-aside files: not while the directory is as recovery last left it and
// every remover it waited for still runs (for up to 10 s), so that a file
// left costs a listing neither the operation lock nor a warning each time.
func (e *Engine) recoveryDue(id string, snap *dirSnapshot) bool {
	v, ok := e.unrecovered.Load(id)
	if !ok {
		return true
	}
	u := v.(unrecovered)
	gone := func(r identity) bool { return !r.running() }
	if u.dir == snap.dir && time.Since(u.at) < 10*time.Second && !slices.ContainsFunc(u.waiting, gone) {
		return false
	}
	e.unrecovered.Delete(id)
	return true
}

// Judge reads one session with every holder judged afresh and each live
// holder's owner proven, as a decision needs; its Token names the live and
// unknown holders it saw.
func (e *Engine) Judge(ctx context.Context, id string) (Session, error) {
	if err := ValidateID(id); err != nil {
		return Session{}, err
	}
	return e.judgeSession(ctx, id, scan{decision: true, prove: true}, nil)
}

// judgeSession is Judge for a caller that may hold the operation lock
// (how.opLocked), visiting every holder.
func (e *Engine) judgeSession(ctx context.Context, id string, how scan, visit func(Holder)) (Session, error) {
	var entries []string
	s, found, err := e.readSession(ctx, id, how, e.platform(), func(h Holder) bool {
		if h.Verdict != Stale {
			entries = append(entries, holderEntry(id, h))
		}
		if visit != nil {
			visit(h)
		}
		return true
	})
	if err == nil && !found {
		err = &NotFoundError{ID: id, Dir: e.dir}
	}
	if err != nil {
		return Session{}, err
	}
	s.decided = &decided{token: tokenOf(entries), nonStale: entries}
	return s, nil
}

// sessionDirErr turns an error reading the session directory dir into
// readSession's: the state dir is blamed when it is what is wrong; a
// session that vanished or is not a directory is no session (nil).
func (e *Engine) sessionDirErr(dir string, err error) error {
	if serr := e.checkStateDir(); serr != nil && !errors.Is(serr, fs.ErrNotExist) {
		return serr
	}
	if errors.Is(err, errNotDir) || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return fileErr(err)
}
