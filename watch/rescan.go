package watch

// Reading sessions from the engine: full rescans and the re-reads of dirty
// sessions, the record of what was delivered, the retry of failed reads, and
// telling the engine (Mark, TrustSince, SetWatched) how far it may trust its
// snapshots.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// flush re-reads the dirty sessions (or everything, after an overflow) and
// delivers what changed.
func (l *loop) flush(ctx context.Context, notify func(Change)) {
	var c Change
	if l.rescan {
		l.rescan = false
		clear(l.dirty)
		l.fullRescan(ctx, &c)
	} else {
		ids := make([]string, 0, len(l.dirty))
		for id := range l.dirty {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			if l.dirty[id] {
				l.caches.InvalidateSession(id)
			} else {
				l.caches.InvalidateSessionFiles(id)
			}
			for _, h := range l.last[id].Holders {
				l.caches.InvalidatePID(h.PID)
			}
		}
		clear(l.dirty)
		l.refreshAll(ctx, ids, &c)
		if ctx.Err() != nil {
			return
		}
	}
	l.deliver(c, notify)
}

// deliver notifies c unless it is empty.
func (l *loop) deliver(c Change, notify func(Change)) {
	if len(c.Changed) == 0 && len(c.Removed) == 0 {
		return
	}
	slices.SortStableFunc(c.Changed, func(a, b sessionlocks.Session) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	slices.Sort(c.Removed)
	l.w.setStats(func(s *Stats) { s.Notified++ })
	notify(c)
}

// refreshAll re-reads the sessions ids and adds those that changed or
// vanished to c. One engine call reads them all in parallel; if one of them
// is gone (or the call fails otherwise) each is read on its own.
func (l *loop) refreshAll(ctx context.Context, ids []string, c *Change) {
	if l.w.mode == ModePoll {
		for _, id := range ids {
			if !l.mtimes.has(id) {
				// A session new to poll mode: its mtime is taken before it
				// is read, so that whatever lands after the read is polled.
				l.stampMtime(id)
			}
		}
	}
	if len(ids) > 1 {
		if ss, err := l.e.List(ctx, sessionlocks.ListOptions{IDs: ids}); err == nil && len(ss) == len(ids) {
			for _, s := range ss {
				if l.update(s) {
					c.Changed = append(c.Changed, s)
				}
			}
			return
		}
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		l.refresh(ctx, id, c)
	}
}

// refresh re-reads one session and adds it to c if it changed or vanished.
func (l *loop) refresh(ctx context.Context, id string, c *Change) {
	ss, err := l.e.List(ctx, sessionlocks.ListOptions{IDs: []string{id}})
	switch {
	case errors.Is(err, sessionlocks.ErrNotFound) || errors.Is(err, sessionlocks.ErrInvalidID):
		if _, ok := l.last[id]; ok {
			c.Removed = append(c.Removed, id)
		}
		l.forget(id)
		if !l.present() {
			l.rescan = true
		}
	case err != nil:
		if errors.Is(err, sessionlocks.ErrStateDir) || !l.present() {
			l.rescan = true
			return
		}
		l.w.log.Warn("re-reading a session failed; retrying", "session", id, "err", err, "in", rescanRetry)
		l.retryIDs[id] = true
		l.scheduleRetry()
	case len(ss) == 1:
		if l.update(ss[0]) {
			c.Changed = append(c.Changed, ss[0])
		}
	}
}

func (l *loop) scheduleRetry() {
	if l.retryC == nil {
		l.retryT = resetTimer(l.retryT, rescanRetry)
		l.retryC = l.retryT.C
	}
}

func (l *loop) present() bool {
	fi, err := os.Stat(l.dir)
	return err == nil && fi.IsDir()
}

// earlyListing lists every session at start before any session dir is
// watched, and the IDE's first listSessions shares it (see Armed): adding
// the watches took as long as the listing, and the IDE waited for both.
// What it read is confirmed by the full rescan that follows, a stat per
// directory once the watches are in place, and whatever changed in
// between is delivered as a change; the Change for that is returned, nil if
// no early listing was made.
func (l *loop) earlyListing(ctx context.Context) *Change {
	if l.w.mode != ModeNotify || l.fsw == nil || !l.present() {
		return nil
	}
	l.w.baselineOnce.Do(func() { close(l.w.baselineBegun) })
	list, err := l.e.List(ctx, sessionlocks.ListOptions{})
	if err != nil {
		return nil
	}
	for _, s := range list {
		l.update(s)
	}
	l.confirming = true
	return &Change{}
}

// fullRescan adds every watch again, re-reads every session with all caches
// dropped (or, after earlyListing, confirms what it read) and, when c is
// not nil, records what changed since the last delivery.
func (l *loop) fullRescan(ctx context.Context, c *Change) {
	l.w.setStats(func(s *Stats) { s.Rescans++ })
	l.caches.SetWatched(false)
	if !l.confirming {
		l.caches.InvalidateAll()
	}
	l.confirming = false
	l.unwatched = 0
	l.rescanFailed = false
	defer l.updateTrust()
	// A state dir that is another directory now (moved aside and
	// recreated, a symlink retargeted): every session watch is on the old
	// one, so none may count as watched.
	if id, ok := dirIdentity(l.dir); ok && id != l.dirID {
		if l.dirID != (identity{}) && l.fsw != nil {
			for sid := range l.watched {
				l.fsw.Remove(filepath.Join(l.dir, sid))
			}
			clear(l.watched)
		}
		l.dirID = id
	}
	l.watchStateDir()
	// Reopened on every rescan: the state dir may have been replaced.
	l.ds.close()
	l.ds = closedDirStat
	if l.dirOn && l.w.mode == ModePoll {
		l.ds = openDirStat(l.dir)
	}
	t0 := time.Now()
	if l.dirOn {
		ents, err := os.ReadDir(l.dir)
		if err != nil {
			l.w.log.Warn("reading the state directory failed", "dir", l.dir, "err", err)
			l.rescanFailed = true
		}
		seen := map[string]bool{}
		for _, de := range ents {
			if !de.IsDir() || !isSessionName(de.Name()) {
				continue
			}
			id := de.Name()
			seen[id] = true
			if l.w.mode == ModeNotify {
				l.watchSession(id)
			} else {
				l.stampMtime(id)
			}
		}
		l.mtimes.keep(seen)
	}
	// Every session dir seen is watched now: scans from here on read
	// watched directories (see updateTrust).
	l.watchedSince = l.caches.Mark()
	l.w.log.Debug("session directories watched", "dirs", len(l.watched), "ms", float64(time.Since(t0).Microseconds())/1000)
	// A listing begun from here on shares the one below (the engine runs
	// one scan for callers of the same epoch), whichever begins first.
	l.w.baselineOnce.Do(func() { close(l.w.baselineBegun) })
	list, err := l.e.List(ctx, sessionlocks.ListOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		l.w.log.Warn("full rescan failed; retrying", "err", err, "in", rescanRetry)
		l.rescanFailed = true
		l.retryFull = true
		l.scheduleRetry()
		return
	}
	listed := make(map[string]bool, len(list))
	for _, s := range list {
		listed[s.ID] = true
		if l.w.mode == ModeNotify && !l.watched[s.ID] {
			// A session that appeared after the state dir was read: it was
			// listed before its watch existed, so it is read again.
			l.watchSession(s.ID)
			l.caches.InvalidateSession(s.ID)
		}
		if l.w.mode == ModePoll {
			if !l.mtimes.has(s.ID) {
				l.stampMtime(s.ID)
			}
		}
		if l.update(s) && c != nil {
			c.Changed = append(c.Changed, s)
		}
	}
	for id := range l.last {
		if !listed[id] {
			if c != nil {
				c.Removed = append(c.Removed, id)
			}
			l.forget(id)
		}
	}
	for id := range l.watched {
		if !listed[id] {
			l.unwatchSession(id)
		}
	}
}

// update records s as delivered, re-targets the watches that depend on it and
// reports whether it differs from what was delivered before.
func (l *loop) update(s sessionlocks.Session) bool {
	prev, ok := l.last[s.ID]
	l.last[s.ID] = s
	l.track(s)
	if l.w.mode == ModePoll {
		want := hasHolders(s)
		switch {
		case want && !l.watched[s.ID] && len(l.watched) < maxPollWatches:
			l.watchSession(s.ID)
		case !want && l.watched[s.ID]:
			l.unwatchSession(s.ID)
		}
	}
	return !ok || !unchanged(prev, s)
}

// forget drops everything known about a session that is gone.
func (l *loop) forget(id string) {
	delete(l.last, id)
	l.mtimes.del(id)
	delete(l.settle, id)
	l.unwatchSession(id)
	l.untrack(id, nil)
}

func hasHolders(s sessionlocks.Session) bool { return len(s.Holders) > 0 }

// updateTrust tells the engine whether every change under the state dir now
// reaches handleEvent: only in notify mode, with the state dir itself and
// every session dir watched. Then the engine may list from its snapshots
// without a stat per session; otherwise it validates each one.
func (l *loop) updateTrust() {
	trust := l.w.mode == ModeNotify && l.fsw != nil && l.dirOn && l.unwatched == 0 && !l.rescan && !l.rescanFailed
	if trust && l.watchedSince != 0 {
		// Straight after a full rescan whose listing began once every
		// watch was in place (l.watchedSince): what it read may be trusted.
		l.caches.TrustSince(l.watchedSince)
	} else {
		l.caches.SetWatched(trust)
	}
	l.watchedSince = 0
}

// identity is a directory's device and inode.
type identity struct{ dev, ino uint64 }

// checkDirIdentity notices, within a second, that the state dir path names
// another directory than the one watched: inotify reports nothing when a
// parent is moved or a symlink on the way is retargeted.
func (l *loop) checkDirIdentity() {
	if !l.dirOn || l.dirID == (identity{}) {
		return
	}
	if id, ok := dirIdentity(l.dir); ok && id != l.dirID || !ok {
		l.w.log.Info("the state directory was replaced; rescanning", "dir", l.dir)
		l.caches.InvalidateAll()
		l.rescan = true
		l.updateTrust()
	}
}
