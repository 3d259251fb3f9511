package sessionlocks

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"os"
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
func (e *Engine) List(ctx context.Context) ([]Session, error) {
	return e.listing(ctx, false)
}

// ListShared is List for a caller that only reads what it gets. While the
// last listing still stands (a watched engine, nothing invalidated, no
// verdict expired) it returns that listing itself, not a copy: the same
// slice on every call, so that the caller may tell by its identity that
// nothing changed (the server reuses its encoding then). Nobody may modify
// it; the engine never does once it is kept.
func (e *Engine) ListShared(ctx context.Context) ([]Session, error) {
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
func (e *Engine) Sessions(ctx context.Context, ids []string) ([]Session, error) {
	for _, id := range ids {
		if err := ValidateID(id); err != nil {
			return nil, err
		}
	}
	return e.scanMany(ctx, ids, false)
}

// Session reads one session with every holder probed afresh (never from the
// cache), as a decision such as canResume needs.
func (e *Engine) Session(ctx context.Context, id string) (Session, error) {
	if err := ValidateID(id); err != nil {
		return Session{}, err
	}
	s, err := e.scanSession(id, false)
	if err == nil && s == nil {
		err = &NotFoundError{ID: id, Dir: e.dir}
	}
	if err != nil {
		return Session{}, err
	}
	return *s, nil
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

// idFeed hands session ids to scan workers in chunks, in order, while they
// may still be being read from the state dir.
type idFeed struct {
	// res, found and errs hold every chunk's results, when the ids were
	// known from the start (one allocation each, not three per chunk).
	res   []Session
	found []bool
	errs  []error

	mu     sync.Mutex
	cond   sync.Cond
	ids    []string // every id added so far; complete once done
	chunks []*idChunk
	taken  int // ids handed out
	done   bool
	err    error // why reading the ids failed; set with done
}

// idChunk is a run of ids one worker scans, and what it found.
type idChunk struct {
	ids   []string
	res   []Session
	found []bool
	errs  []error
}

func newIDFeed() *idFeed {
	f := &idFeed{}
	f.cond.L = &f.mu
	return f
}

// fullFeed is a finished feed of ids.
func fullFeed(ids []string) *idFeed {
	f := newIDFeed()
	f.ids, f.done = ids, true
	f.res, f.found, f.errs = make([]Session, len(ids)), make([]bool, len(ids)), make([]error, len(ids))
	return f
}

func (f *idFeed) add(ids []string) {
	if len(ids) == 0 {
		return
	}
	f.mu.Lock()
	f.ids = append(f.ids, ids...)
	f.mu.Unlock()
	f.cond.Broadcast()
}

func (f *idFeed) finish(err error) {
	f.mu.Lock()
	f.done, f.err = true, err
	f.mu.Unlock()
	f.cond.Broadcast()
}

// all is every id added so far.
func (f *idFeed) all() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ids
}

func (f *idFeed) finished() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.done
}

// take returns the next chunk to scan, waiting for ids to arrive; nil when
// every id has been handed out and no more will come.
func (f *idFeed) take() *idChunk {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		if n := len(f.ids) - f.taken; n >= scanChunk || n > 0 && f.done {
			n = min(n, scanChunk)
			lo, hi := f.taken, f.taken+n
			c := &idChunk{ids: f.ids[lo:hi:hi]}
			if f.res != nil {
				c.res, c.found, c.errs = f.res[lo:hi:hi], f.found[lo:hi:hi], f.errs[lo:hi:hi]
			}
			f.taken = hi
			f.chunks = append(f.chunks, c)
			return c
		}
		if f.done {
			return nil
		}
		f.cond.Wait()
	}
}

// scanSession reads one session directory and judges its holders. It
// returns nil, nil when there is no such session directory. With cached
// false, nothing is taken from a cache (results are still stored).
func (e *Engine) scanSession(id string, cached bool) (*Session, error) {
	return e.scanSessionOp(id, cached, false)
}

// scanLocked is scanSession for a caller holding the session's operation
// lock: nothing cached, and .hold files probed whatever their age.
func (e *Engine) scanLocked(id string) (*Session, error) { return e.scanSessionOp(id, false, true) }

func (e *Engine) scanSessionOp(id string, cached, opLocked bool) (*Session, error) {
	return e.judgeSession(id, cached, opLocked, nil)
}

// judgeSession reads one session and judges every holder, calling visit
// (if not nil) with each, and sets its Token from every live and unknown
// holder, listed or not: what a decision rests on.
func (e *Engine) judgeSession(id string, cached, opLocked bool, visit func(Holder)) (*Session, error) {
	var s Session
	var nonStale []string
	sg := e.decisionSight(true)
	sg.brief = true // a judgement's unlisted holders only count, and name the live ones in the token
	ok, err := e.scanVisit(&s, id, cached, opLocked, nil, sg, func(h Holder) bool {
		if h.Verdict != Stale {
			nonStale = append(nonStale, holderEntry(id, h))
		}
		if visit != nil {
			visit(h)
		}
		return true
	})
	if !ok || err != nil {
		return nil, err
	}
	s.decided = &decided{token: tokenOf(nonStale), nonStale: nonStale}
	return &s, nil
}

// scanInto is scanSession writing into s; ok is false when there is no
// such session directory.
func (e *Engine) scanInto(s *Session, id string, cached, opLocked bool, r *dirReader, sg *sight) (ok bool, err error) {
	return e.scanVisit(s, id, cached, opLocked, r, sg, nil)
}

// scanVisit is scanInto calling visit with every holder it judges, listed
// or not (see maxListedHolders), in pid order: how a mutation walks a
// session of 100,000 holders without holding them all. visit returns false
// to stop there; s then describes only the holders judged so far.
func (e *Engine) scanVisit(s *Session, id string, cached, opLocked bool, r *dirReader, sg *sight, visit func(Holder) bool) (ok bool, err error) {
	epoch := e.epoch.Load()
	watched := cached && e.watched.Load()
	var refs []lockRef // the holders to judge: snap.refs, or a huge session's made afresh

	// snap is read-only once stored: the watched path uses the stored
	// snapshot itself rather than a copy (a listing of 10,000 copies spent
	// its time in memmove).
	var snap *dirSnapshot
	if watched {
		snap = e.dirs.peekPtr(id)
		ok = snap != nil
	}
	if !ok {
		if r == nil {
			r = newDirReader(e.dir)
			defer r.close()
		}
		now := e.now()
		dir := e.dir + string(os.PathSeparator) + id
		var old *dirSnapshot
		var sd sessionDir
		read := false
		last := e.dirs.peekPtr(id)
		if cached && last != nil {
			dirID, err := r.stat(dir, id)
			if err != nil {
				return e.sessionDirErr(dir, err)
			}
			if dirID.mode != uint32(fs.ModeDir) { // a symlinked session directory is never followed
				return false, nil
			}
			old = e.dirs.valid(id, dirID)
		}
		if old == nil {
			// Nothing to validate: open and list the directory at once, its
			// identity taken from the open descriptor (no separate lstat).
			if sd, err = r.read(dir, id); err != nil {
				return e.sessionDirErr(dir, err)
			}
			read = true
		}
		// A snapshot read before the watcher's last Mark and confirmed by a
		// scan after it is stored again, stamped with this scan's epoch:
		// the stats here came after every watch was in place, so TrustSince
		// keeps it (the watcher lists once before it adds its watches).
		// Confirming it takes workspace.yaml's stat too: rewritten in place,
		// it leaves the directory's mtime alone, and a trusted snapshot is
		// not looked at again until its directory changes.
		marked := e.marked.Load()
		restamp := old != nil && old.epoch < marked && epoch >= marked
		metaDue := old != nil && (restamp || now.Sub(old.metaAt) >= e.cache.ttl)
		if old != nil && !old.huge {
			// The holders' files are stat'ed afresh: their identity is part
			// of the probe cache's key and what a removal checks against.
			// (A huge session's are stat'ed as they are judged.)
			refs = e.lockRefs(id, dir, old.files)
		}
		if old != nil && !metaDue && slices.Equal(refs, old.refs) {
			snap = old // nothing changed: no copy, no store
		} else {
			var fresh dirSnapshot
			if !read {
				fresh = *old
				if metaDue {
					// Metadata is not evidence about locks, but it should not
					// go stale for long: workspace.yaml may be rewritten in
					// place, which leaves the directory's mtime alone.
					e.refreshMeta(dir, &fresh, now)
				}
				fresh.refs = refs
			} else {
				prev := metadata{}
				if last != nil {
					prev = last.meta
				} else {
					prev = e.dirs.droppedMeta(id)
				}
				fresh = e.snapshotOf(dir, sd, now, prev)
				if !fresh.huge {
					fresh.refs = e.lockRefs(id, dir, fresh.files)
				}
			}
			refs = fresh.refs
			fresh.epoch = epoch
			snap = &fresh
			e.dirs.store(id, snap, epoch, &e.epoch)
		}
	}
	if refs == nil {
		refs = snap.refs
	}

	*s = Session{ID: id, Dir: snap.path}
	m := snap.meta
	s.Name, s.CWD, s.Repository, s.Branch, s.ClientName = m.Name, m.CWD, m.Repository, m.Branch, m.ClientName
	s.CreatedAt, s.UpdatedAt = m.created, m.updated
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = snap.dir.modTime()
		if m := snap.metaID.modTime(); snap.metaID.exists() && m.After(s.UpdatedAt) {
			s.UpdatedAt = m
		}
	}
	if s.Repository == "" && m.GitRoot != "" {
		s.Repository = m.GitRoot
	}

	// A session lists at most maxListedHolders holders and counts the
	// rest; every one is judged, for the state. A huge session's verdicts
	// are not cached (its listing would hold them all), and its holders
	// are made, stat'ed and judged in batches on every core, then visited
	// in order: 100,000 dead locks never exist as 100,000 holders at once.
	var n holderCounts
	take := func(h Holder) bool {
		n.add(h.Verdict)
		if len(s.Holders) < maxListedHolders {
			s.Holders = append(s.Holders, h)
		} else {
			s.HoldersOmitted++
		}
		return visit == nil || visit(h)
	}
	if snap.huge {
		e.judgeHuge(snap, id, opLocked, sg, take, maxListedHolders)
		n.summarise(s)
		return true, nil
	}
	for _, r := range refs {
		k := r.key()
		h, got := Holder{}, false
		if cached {
			h, got = e.cache.get(k)
		}
		if !got {
			h = e.judge(r, e.now(), opLocked, sg)
			e.cache.put(k, h, epoch, &e.epoch)
		}
		if !take(h) {
			break
		}
	}
	n.summarise(s)
	return true, nil
}

// judgeBatch is how many holders of a huge session are judged at a time.
const judgeBatch = 4096

// judgeHuge judges the holders of a huge session snap, judgeBatch at a
// time on every core, and visits them in pid order until visit returns
// false. Holders from the listed-th on are judged briefly if sg allows
// (see judgeHolder); those whose files have gone are skipped.
func (e *Engine) judgeHuge(snap *dirSnapshot, id string, opLocked bool, sg *sight, visit func(Holder) bool, listed int) {
	st := openDirStat(snap.path)
	defer st.close()
	files := snap.files
	starts := make([]int, 0, judgeBatch)
	batch := make([]Holder, judgeBatch)
	visited := 0
	for i := 0; i < len(files); {
		starts = starts[:0]
		for ; i < len(files) && len(starts) < judgeBatch; i = nextHolder(files, i) {
			starts = append(starts, i)
		}
		before := visited
		workers := min(runtime.GOMAXPROCS(0), (len(starts)+255)/256)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var buf []byte
				for k := w; k < len(starts); k += workers {
					r, ok := refAt(id, snap.path, files, starts[k], st, &buf)
					if !ok {
						batch[k] = Holder{} // gone since the listing
						continue
					}
					batch[k] = e.judgeHolder(r, e.now(), opLocked, sg, sg.brief && before+k >= listed)
				}
			}()
		}
		wg.Wait()
		for k := range starts {
			h := batch[k]
			if h.Verdict == "" {
				continue
			}
			if visited < listed && sg.brief && before+k >= listed {
				// Listed after all, holders before it having gone: judged
				// again in full, with its sentence and paths.
				var buf []byte
				r, ok := refAt(id, snap.path, files, starts[k], st, &buf)
				if !ok {
					continue
				}
				h = e.judge(r.withKeyPath(), e.now(), opLocked, sg)
			}
			if visited++; !visit(h) {
				return
			}
		}
	}
}

// maxListedHolders bounds the holders a session lists; the rest are
// counted (Session.HoldersOmitted). A real session has one or two; a
// directory of years of crashes, or a hostile one, may have 100,000.
const maxListedHolders = 1000

// holderCounts counts verdicts, for a session's state.
type holderCounts struct{ live, unknown, all int }

func (n *holderCounts) add(v Verdict) {
	n.all++
	switch v {
	case Live:
		n.live++
	case Unknown:
		n.unknown++
	}
}

// summarise derives a session's state from its holders' verdicts: inUse if
// any is live, else unknown if any is unknown, else stale if there are
// holders, else free; conflict when two or more are live.
func (n holderCounts) summarise(s *Session) {
	switch {
	case n.live > 0:
		s.State = StateInUse
	case n.unknown > 0:
		s.State = StateUnknown
	case n.all > 0:
		s.State = StateStale
	default:
		s.State = StateFree
	}
	s.Conflict = n.live > 1
}

// sessionDirErr turns an error reading the session directory dir into
// scanInto's answer. The state dir is blamed when it is the state dir that
// is wrong (not a directory, unreadable), so that callers get one error for
// it; a session that vanished or is not a directory is no session.
func (e *Engine) sessionDirErr(dir string, err error) (bool, error) {
	if fi, serr := os.Stat(e.dir); serr != nil && !errors.Is(serr, fs.ErrNotExist) {
		return false, &StateDirError{Path: e.dir, Err: serr}
	} else if serr == nil && !fi.IsDir() {
		return false, &StateDirError{Path: e.dir, Err: errors.New("not a directory")}
	}
	if errors.Is(err, errNotDir) || errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, fileErr(err)
}

// snapshotOf makes the snapshot of a session directory just read.
// prev is the metadata read last time, kept if workspace.yaml is caught
// mid-rewrite.
func (e *Engine) snapshotOf(dir string, sd sessionDir, now time.Time, prev metadata) dirSnapshot {
	snap := dirSnapshot{path: dir, dir: sd.id, readAt: now, metaAt: now, metaRead: now.UnixNano(), meta: prev}
	snap.files = sd.files
	snap.huge = countHolders(snap.files) > maxListedHolders
	if sd.hasMeta {
		e.applyMeta(&snap, dir, sd.meta, sd.metaID, sd.metaErr)
	} else {
		snap.meta = metadata{}
	}
	return snap
}

// refreshMeta reads workspace.yaml again if it changed since snap read it.
func (e *Engine) refreshMeta(dir string, snap *dirSnapshot, now time.Time) {
	snap.metaAt = now
	path := dir + string(os.PathSeparator) + "workspace.yaml"
	if snap.metaID.exists() && time.Unix(0, snap.metaRead).Sub(snap.metaID.modTime()) >= racyWindow {
		if id, err := lstatID(path); err == nil && id == snap.metaID {
			return
		}
	}
	b, id, err := readRegular(path, maxWorkspaceYAML)
	snap.metaRead = now.UnixNano()
	e.applyMeta(snap, dir, b, id, err)
}

// applyMeta parses workspace.yaml's bytes b (read with identity id, or
// failing with readErr) into snap.
func (e *Engine) applyMeta(snap *dirSnapshot, dir string, b []byte, id fileID, readErr error) {
	m, err := metadata{}, readErr
	if err == nil {
		m, err = parseMetadata(b)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.log.Debug("workspace.yaml unreadable", "dir", dir, "err", err)
	}
	if (err != nil && !errors.Is(err, fs.ErrNotExist) || id.exists() && id.size == 0) && snap.meta != (metadata{}) {
		// Caught mid-rewrite (the CLI truncates and rewrites it in place):
		// keep what it said before, and read it again next time.
		snap.metaID = fileID{}
		return
	}
	snap.meta, snap.metaID = m, id
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
	// Compact keys: comparing through the sessions themselves chased
	// 232-byte strides and cost more than the whole scan.
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
