package watch

// Flushing: the dirty sessions (or every one) listed afresh, and what differs
// from the last push pushed as one Change.

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// flush lists what is due, watches the processes the sessions now name and,
// if push, pushes what changed.
func (l *loop) flush(ctx context.Context, push bool) {
	dirty, rescan, dropAll := l.dirty, l.rescan, l.dropAll
	l.dirty, l.rescan, l.dropAll = map[string]bool{}, false, false
	if dropAll {
		l.e.Invalidate()
	} else if len(dirty) > 0 {
		l.e.Invalidate(slices.Collect(maps.Keys(dirty))...)
	}
	var c Change
	var err error
	if rescan {
		if l.files != nil {
			if werr := l.files.watchAll(); werr != nil {
				l.fallBack(werr)
			}
		}
		err = l.listAll(ctx, &c)
	} else {
		err = l.listSome(ctx, dirty, &c)
	}
	if err != nil && ctx.Err() == nil {
		l.w.log.Warn("listing sessions failed; retrying", "err", err, "in", retryDelay)
		for id, d := range dirty {
			l.markDirty(id, d)
		}
		l.rescan, l.dropAll = l.rescan || rescan, l.dropAll || dropAll
		l.armFlush(retryDelay)
	}
	l.watchProcs()
	if push && ctx.Err() == nil {
		l.deliver(c)
	}
}

// listAll lists every session into c: those new or changed, and those gone.
func (l *loop) listAll(ctx context.Context, c *Change) error {
	l.w.setStats(func(s *Stats) { s.Rescans++ })
	l.listedAt = time.Now()
	ss, err := l.e.List(ctx, sessionlocks.ListOptions{})
	l.listCost = time.Since(l.listedAt)
	if err != nil {
		return err
	}
	listed := make(map[string]bool, len(ss))
	for _, s := range ss {
		listed[s.ID] = true
		l.record(s, c)
	}
	for id := range l.last {
		if !listed[id] {
			l.gone(id, c)
		}
	}
	return nil
}

// listSome lists the sessions dirty into c. A session whose directory came
// or went is watched before it is listed, or found gone.
func (l *loop) listSome(ctx context.Context, dirty map[string]bool, c *Change) error {
	ids := make([]string, 0, len(dirty))
	for _, id := range slices.Sorted(maps.Keys(dirty)) {
		if dirty[id] && l.files != nil {
			present, err := l.files.watchSession(id)
			if err != nil {
				l.fallBack(err)
			}
			if !present {
				l.gone(id, c)
				continue
			}
		}
		ids = append(ids, id)
	}
	for len(ids) > 0 {
		ss, err := l.e.List(ctx, sessionlocks.ListOptions{IDs: ids})
		var nf *sessionlocks.NotFoundError
		switch {
		case errors.As(err, &nf) && nf.NoDir:
			l.rescan = true // the state dir is gone: so is every session
			return nil
		case errors.As(err, &nf) && slices.Contains(ids, nf.ID):
			// Gone since it was looked at: list the others again.
			l.gone(nf.ID, c)
			ids = slices.DeleteFunc(ids, func(id string) bool { return id == nf.ID })
			continue
		case err != nil:
			return err
		}
		for _, s := range ss {
			l.record(s, c)
		}
		return nil
	}
	return nil
}

// record keeps s as pushed, schedules its settle ends and adds it to c if
// it is new or differs from what was pushed.
func (l *loop) record(s sessionlocks.Session, c *Change) {
	prev, ok := l.last[s.ID]
	l.last[s.ID] = s
	l.settleAt(s)
	if !ok || !same(prev, s) {
		c.Changed = append(c.Changed, s)
	}
}

// gone forgets a session that is no more and adds it to c if it was pushed.
func (l *loop) gone(id string, c *Change) {
	if _, ok := l.last[id]; ok {
		c.Removed = append(c.Removed, id)
	}
	delete(l.last, id)
	delete(l.settle, id)
	if l.files != nil {
		l.files.unwatch(id)
	}
}

// deliver pushes c unless it is empty, newest sessions first.
func (l *loop) deliver(c Change) {
	if len(c.Changed) == 0 && len(c.Removed) == 0 {
		return
	}
	slices.SortStableFunc(c.Changed, func(a, b sessionlocks.Session) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	slices.Sort(c.Removed)
	l.w.setStats(func(s *Stats) { s.Notified++ })
	l.notify(c)
}

// same reports whether b, a new listing of a session pushed as a, tells the
// IDE nothing new. Probe times, the cache flag and the wording of details
// are left out, or every probe would be a change.
func same(a, b sessionlocks.Session) bool {
	return a.State == b.State && a.Conflict == b.Conflict && a.HoldersOmitted == b.HoldersOmitted &&
		a.Name == b.Name && a.CWD == b.CWD && a.Repository == b.Repository && a.Branch == b.Branch &&
		a.ClientName == b.ClientName && a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt) &&
		slices.EqualFunc(a.Holders, b.Holders, sameHolder)
}

func sameHolder(x, y sessionlocks.Holder) bool {
	return x.PID == y.PID && x.LockFile == y.LockFile && x.HoldFile == y.HoldFile &&
		x.LockWrittenAt.Equal(y.LockWrittenAt) && x.Verdict == y.Verdict && x.Reason == y.Reason &&
		ownerPID(x) == ownerPID(y) && x.Terminal == y.Terminal && orphaned(x) == orphaned(y) &&
		launcherAlive(x) == launcherAlive(y)
}

func orphaned(h sessionlocks.Holder) bool { return h.Orphaned != nil && *h.Orphaned }

func launcherAlive(h sessionlocks.Holder) bool { return h.Launcher != nil && h.Launcher.Alive }

func ownerPID(h sessionlocks.Holder) int {
	if h.Owner == nil {
		return 0
	}
	return h.Owner.PID
}
