package sessionlocks

// Listing every session: one scan shared by callers that come while it runs,
// the listing kept while a watcher vouches for it, the session ids read from
// the state dir, the workers that scan them, and the newest-first order.

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"runtime"
	"slices"
	"sync"
	"time"
)

// List returns every session in the state dir, newest UpdatedAt first. A
// missing state dir means no sessions, not an error. Probe results may come
// from the cache (Holder.Cached).
//
// Concurrent calls share one scan when nothing was invalidated since it
// began: at start-up the watcher's first snapshot and the IDE's first
// listSessions would otherwise both read every directory cold. The slice
// is the caller's own (it may be reordered or filtered in place), but the
// sessions' Holders are shared and must not be modified.
func (e *Engine) List(ctx context.Context, opts ListOptions) ([]Session, error) {
	if opts.IDs != nil {
		return e.sessions(ctx, opts.IDs)
	}
	return e.listing(ctx, false)
}

// ListOptions select what List returns.
type ListOptions struct {
	// IDs are the sessions to list, full ids, in the order given: each must
	// exist. Nil means every session.
	IDs []string
}

// ListShared is List for a caller that only reads what it gets. While the
// last listing still stands (a watched engine, nothing invalidated, no
// verdict expired) it returns that listing itself, not a copy: the same
// slice on every call, so that the caller may tell by its identity that
// nothing changed (the server reuses its encoding then). Nobody may modify
// it; the engine never does once it is kept.
func (e *Engine) listShared(ctx context.Context) ([]Session, error) {
	return e.listing(ctx, true)
}

// listing is List, or ListShared if shared.
func (e *Engine) listing(ctx context.Context, shared bool) ([]Session, error) {
	out, private, err := e.listingShared(ctx)
	if err != nil || shared || private {
		return out, err
	}
	return slices.Clone(out), nil
}

// listingShared returns a listing for reading only: the kept listing, or a
// flight's result that other callers may share. It is private when this
// caller made it and nobody else has it (no follower joined, not kept), so
// that List need not copy it.
func (e *Engine) listingShared(ctx context.Context) (out []Session, private bool, err error) {
	e.checkWatchedDir()
	if out, ok := e.cachedList(e.epoch.Load()); ok {
		return out, false, nil
	}
	e.flightMu.Lock()
	if f := e.flight; f != nil && f.epoch == e.epoch.Load() {
		f.followers++
		e.flightMu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		if f.err == nil {
			return f.res, false, nil
		}
		if ctx.Err() == nil && (errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded)) {
			out, err := e.list(ctx) // the leader gave up, not us
			return out, !e.isKept(out), err
		}
		return nil, false, f.err
	}
	f := &listFlight{done: make(chan struct{}), epoch: e.epoch.Load()}
	e.flight = f
	e.flightMu.Unlock()
	f.res, f.err = e.list(ctx)
	e.flightMu.Lock()
	if e.flight == f {
		e.flight = nil
	}
	followed := f.followers > 0 // no one can join now
	e.flightMu.Unlock()
	close(f.done)
	return f.res, !followed && !e.isKept(f.res), f.err
}

// isKept reports whether out is the kept listing (see keepList).
func (e *Engine) isKept(out []Session) bool {
	lc := e.lastList.Load()
	return lc != nil && len(out) > 0 && len(lc.sessions) == len(out) && &lc.sessions[0] == &out[0]
}

// listFlight is a List in progress that later callers may wait for. Its
// result is shared by all of them, read only.
type listFlight struct {
	done      chan struct{}
	epoch     uint64
	followers int // callers waiting for res; guarded by Engine.flightMu
	res       []Session
	err       error
}

func (e *Engine) list(ctx context.Context) ([]Session, error) {
	began := e.epoch.Load()
	if out, ok := e.cachedList(began); ok {
		return out, nil // kept while the flight was joined
	}
	ids, ok, err := e.cachedSessionIDs()
	if err != nil {
		return nil, err
	}
	var feed *idFeed
	if ok {
		// Scanned in the order the last listing sorted them into, the
		// sessions mostly come out sorted already, and sorting is then one
		// pass.
		order := ids
		e.orderMu.Lock()
		if len(ids) > 0 && len(e.order.from) == len(ids) && &e.order.from[0] == &ids[0] {
			order = e.order.sorted
		}
		e.orderMu.Unlock()
		feed = fullFeed(order)
	} else {
		// The state dir is read while the sessions already named are
		// scanned: reading 10,000 names is milliseconds of one core.
		feed = newIDFeed()
		go func() { feed.finish(e.readSessionIDs(feed)) }()
	}
	out, err := e.scanFeed(ctx, feed, true)
	if !ok {
		ids = feed.ids // complete: scanFeed returns only once the feed is finished
	}
	if err == nil {
		err = feed.err
	}
	if err != nil {
		return nil, err
	}
	order := feed.ids
	if len(out) != e.dirs.size() {
		keep := make(map[string]struct{}, len(ids))
		for _, id := range ids {
			keep[id] = struct{}{}
		}
		e.dirs.prune(keep)
	}
	out = sortSessions(out)
	if len(out) == len(ids) && len(ids) > 0 && !sameOrder(out, order) {
		sorted := make([]string, len(out))
		for i := range out {
			sorted[i] = out[i].ID
		}
		e.orderMu.Lock()
		e.order.from, e.order.sorted = ids, sorted
		e.orderMu.Unlock()
	}
	e.keepList(out, began)
	return out, nil
}

// listCache is a whole listing, kept while a watcher vouches for every
// directory (see SetWatched) and every verdict in it is still in the probe
// cache: a listing made again then would be the same, holder for holder,
// so it is not made again. What it saves is small per session but adds up:
// the IDE lists every session often, and most of the time nothing changed.
type listCache struct {
	epoch    uint64
	expires  time.Time // when the first of its verdicts leaves the probe cache
	sessions []Session
	holders  int
}

// cachedList returns the kept listing, which nobody may modify, if no
// invalidation came since it was made (the epoch is began), the engine
// still trusts its watcher, and none of its verdicts has expired.
func (e *Engine) cachedList(began uint64) ([]Session, bool) {
	lc := e.lastList.Load()
	if lc == nil || lc.epoch != began || !e.watched.Load() || !e.now().Before(lc.expires) {
		return nil, false
	}
	e.cache.hits.Add(uint64(lc.holders)) // as if each verdict had been looked up
	return lc.sessions, true
}

// keepList keeps out for cachedList if it may stand for the next listing:
// made while watched, with no invalidation during it (began), and every
// verdict in it taken from the probe cache (a fresh one says Cached false,
// which the next listing would say true).
func (e *Engine) keepList(out []Session, began uint64) {
	if !e.watched.Load() || e.cache.ttl <= 0 {
		e.lastList.Store(nil)
		return
	}
	lc := &listCache{epoch: began, expires: e.now().Add(e.cache.ttl)}
	for i := range out {
		for _, h := range out[i].Holders {
			if !h.Cached {
				e.lastList.Store(nil)
				return
			}
			// A verdict stays in the probe cache ttl after it was stored,
			// which is no earlier than it was probed.
			if exp := h.ProbedAt.Add(e.cache.ttl); exp.Before(lc.expires) {
				lc.expires = exp
			}
			lc.holders++
		}
	}
	if e.epoch.Load() != began {
		return
	}
	// Kept as it is: every caller gets out read only (listingShared), and
	// List copies it for its caller.
	lc.sessions = out
	e.lastList.Store(lc)
}

// Sessions returns the named sessions in the order given, using the cache like
// List. An invalid id gives an *IDError, a missing one a *NotFoundError.
func (e *Engine) sessions(ctx context.Context, ids []string) ([]Session, error) {
	for _, id := range ids {
		if err := ValidateID(id); err != nil {
			return nil, err
		}
	}
	return e.scanMany(ctx, ids, false)
}

// cachedSessionIDs returns the state dir's session ids if the ids cache
// still holds them (ok); a missing state dir is no sessions.
func (e *Engine) cachedSessionIDs() (ids []string, ok bool, err error) {
	// stat, not lstat: a state dir reached through a symlink changes when
	// its target does, not the link.
	dirID, err := statID(e.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, true, nil
		}
		return nil, false, &StateDirError{Path: e.dir, Err: err}
	}
	ids, ok = e.ids.lookup(dirID)
	return ids, ok, nil
}

// readSessionIDs lists the state dir's session directories into feed as
// they are read, and keeps the whole list in the ids cache. Entries that
// are not valid ids (".session-operation-locks", stray files) or are
// symlinks are not sessions.
func (e *Engine) readSessionIDs(feed *idFeed) error {
	epoch := e.epoch.Load()
	dirID, err := statID(e.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return &StateDirError{Path: e.dir, Err: err}
	}
	now := e.now()
	if err := readSessionIDs(e.dir, feed.add); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return &StateDirError{Path: e.dir, Err: err}
	}
	// The feed's own slice, so that the next listing knows these ids for
	// the ones this listing sorted (see list).
	e.ids.store(dirID, now, feed.all(), epoch, &e.epoch)
	return nil
}

// scanMany scans sessions in parallel: cold scans spend their time in
// syscalls and YAML, which spread over every core. With all=true, sessions
// that vanished meanwhile are skipped; otherwise they are an error.
const scanChunk = 32

func (e *Engine) scanMany(ctx context.Context, ids []string, all bool) ([]Session, error) {
	e.checkWatchedDir()
	return e.scanFeed(ctx, fullFeed(ids), all)
}

// scanFeed is scanMany over ids that may still be arriving. It returns
// once the feed is finished (or ctx is done and the feed too). The caller
// has called checkWatchedDir.
func (e *Engine) scanFeed(ctx context.Context, feed *idFeed, all bool) ([]Session, error) {
	sg := e.newSight()
	workers := runtime.GOMAXPROCS(0) * 2
	if feed.finished() {
		workers = min(workers, (len(feed.ids)+scanChunk-1)/scanChunk)
	}
	work := func() {
		r := newDirReader(e.dir)
		defer r.close()
		// Work is handed out in chunks: one shared counter bumped per
		// session bounced between cores more than the work it shared.
		for {
			c := feed.take()
			if c == nil {
				return
			}
			if ctx.Err() != nil {
				continue // drain, so that the feed's reader is not left waiting
			}
			if c.res == nil {
				c.res = make([]Session, len(c.ids))
				c.found = make([]bool, len(c.ids))
				c.errs = make([]error, len(c.ids))
			}
			for i, id := range c.ids {
				c.found[i], c.errs[i] = e.scanInto(&c.res[i], id, true, false, r, sg)
			}
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	// The caller works too: a watched listing is done in less time than
	// it takes to wake a second thread.
	work()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := feed.res[:0] // compacted in place when the feed had room for every result
	if res == nil {
		res = make([]Session, 0, len(feed.ids))
	}
	for _, c := range feed.chunks {
		for i := range c.res {
			if c.errs[i] != nil {
				if all && !errors.Is(c.errs[i], ErrStateDir) {
					e.log.Debug("session skipped", "id", c.ids[i], "err", c.errs[i])
					continue
				}
				return nil, c.errs[i]
			}
			if !c.found[i] {
				if all {
					continue
				}
				return nil, &NotFoundError{ID: c.ids[i], Dir: e.dir}
			}
			res = append(res, c.res[i])
		}
	}
	return res, nil
}

// sortSessions orders sessions newest UpdatedAt first (then by id), in
// place. It sorts indices, not the sessions, then applies the permutation by
// following its cycles: a Session is a few hundred bytes, and swapping
// 10,000 of them inside the sort, or copying them into a new slice, cost a
// listing more than everything else.
func sortSessions(ss []Session) []Session {
	if sessionsSorted(ss) {
		return ss // scanned in last listing's order, and nothing moved
	}
	// Sort compact keys, not the sessions: a Session is large, and the
	// comparisons should touch only what they compare.
	type key struct {
		t int64 // UpdatedAt, Unix nanoseconds
		i int32
	}
	keys := make([]key, len(ss))
	for i := range ss {
		keys[i] = key{ss[i].UpdatedAt.UnixNano(), int32(i)}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(b.t, a.t); c != 0 {
			return c
		}
		return cmp.Compare(ss[a.i].ID, ss[b.i].ID)
	})
	idx := make([]int32, len(ss))
	for i, k := range keys {
		idx[i] = k.i
	}
	// idx[i] is the session that belongs at i. Each cycle is moved round
	// once, through one temporary; done positions are marked with -1.
	for start := range idx {
		if idx[start] < 0 || int(idx[start]) == start {
			idx[start] = -1
			continue
		}
		tmp := ss[start]
		i := start
		for {
			j := int(idx[i])
			idx[i] = -1
			if j == start {
				ss[i] = tmp
				break
			}
			ss[i] = ss[j]
			i = j
		}
	}
	return ss
}

func sessionsSorted(ss []Session) bool {
	for i := 1; i < len(ss); i++ {
		a, b := &ss[i-1], &ss[i]
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c > 0 || c == 0 && a.ID > b.ID {
			return false
		}
	}
	return true
}

// sameOrder reports whether ss are the sessions named by ids, in order.
func sameOrder(ss []Session, ids []string) bool {
	if len(ss) != len(ids) {
		return false
	}
	for i := range ss {
		if ss[i].ID != ids[i] {
			return false
		}
	}
	return true
}
