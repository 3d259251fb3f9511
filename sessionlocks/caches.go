package sessionlocks

// The engine's caches as a watcher drives them: the changes it reports, and
// whether the engine may trust what it read between reports. Listings use
// the caches; decisions (Session, Force, Reclaim) never do. docs/design.md
// lists every cache and what drops it.

// Caches is the engine's side of a watcher. Its zero value is not usable:
// get it from Engine.Caches.
type Caches struct{ e *Engine }

// Caches returns the handle a watcher, or a status report, uses.
func (e *Engine) Caches() Caches { return Caches{e} }

// Stats returns the probe cache's counters.
func (c Caches) Stats() CacheStats { return c.e.cache.stats() }

// InvalidateSession drops every cached fact about one session, so that the
// next scan reads its directory and re-probes its holders.
//
// The epoch moves on twice: before the drops, so that a scan that began
// earlier and stores after them has its store undone (store, then check);
// and after them, so that a listing that began between the two, and so
// read what was about to be dropped, is not kept as the last listing for
// later ones to reuse (see cachedList).
func (c Caches) InvalidateSession(id string) { c.e.invalidateSession(id, true) }

// InvalidateSessionFiles is InvalidateSession for a change to the files
// inside a session directory (its workspace.yaml, its lock files), which
// cannot add or remove a session: the list of session directories is kept.
// Reading that list again is most of what a listing of 10,000 sessions
// costs after one changed. The list stays checked against the state dir's
// own identity, which any session created or removed changes.
func (c Caches) InvalidateSessionFiles(id string) { c.e.invalidateSession(id, false) }

func (e *Engine) invalidateSession(id string, list bool) {
	e.epoch.Add(1)
	e.testHookInvalidating()
	e.dirs.drop(id)
	if list {
		e.ids.drop()
	}
	e.cache.dropSession(id)
	e.epoch.Add(1)
}

// InvalidatePID drops the cached verdicts of every lock naming pid. The
// epoch moves on before and after, as in InvalidateSession.
func (c Caches) InvalidatePID(pid int) {
	e := c.e
	e.epoch.Add(1)
	e.testHookInvalidating()
	e.cache.dropPID(pid)
	e.epoch.Add(1)
}

// InvalidateAll empties every cache (after an event overflow, say). The
// epoch moves on before and after, as in InvalidateSession.
func (c Caches) InvalidateAll() { c.e.invalidateAll() }

func (e *Engine) invalidateAll() {
	e.epoch.Add(1)
	e.testHookInvalidating()
	e.dirs.clear()
	e.ids.drop()
	e.cache.clear()
	e.epoch.Add(1)
}

// testHookInvalidating runs between an invalidation's first epoch move and
// its drops, when a test set onInvalidating.
func (e *Engine) testHookInvalidating() {
	if f := e.onInvalidating; f != nil {
		f()
	}
}

// SetWatched tells the engine whether a watcher now reports every change of
// the state dir and of every session dir (file created, removed, renamed,
// written) through InvalidateSession or InvalidateAll. While it does,
// listings reuse directory snapshots without a stat per session, which is
// what makes a cached listing of 10,000 sessions cost milliseconds. A
// watcher that cannot see everything (poll mode, a failed watch, an event
// overflow it has not yet answered with InvalidateAll) must leave it off.
//
// Turning it on drops every snapshot first (they were taken without the
// watcher's guarantee) and records which directory the state dir is: if the
// path later names another directory (moved aside and recreated, a symlink
// retargeted), the watcher's watches are on the old one, and the engine stops
// trusting by itself at its next listing.
func (c Caches) SetWatched(on bool) {
	e := c.e
	if !on {
		e.watchMu.Lock()
		e.watched.Store(false)
		e.watchMu.Unlock()
		return
	}
	e.startTrust(e.invalidateAll)
}

// startTrust turns trust on, first calling drop to forget what may not be
// trusted; nothing happens if trust is on already or there is no state dir.
func (e *Engine) startTrust(drop func()) {
	e.watchMu.Lock()
	defer e.watchMu.Unlock()
	if e.watched.Load() {
		return
	}
	id, err := statID(e.dir)
	if err != nil {
		return // no state dir: nothing to trust yet
	}
	drop()
	e.watchedDir = id
	e.watched.Store(true)
}

// Mark starts a new epoch and returns it, for TrustSince: a watcher calls it
// once every watch is in place, and every scan that begins after it reads
// directories the watcher already watches. Such a scan, unwatched, stats
// every directory it has a snapshot of; a snapshot read before the mark
// whose directory is unchanged is stored again as read since the mark.
func (c Caches) Mark() uint64 {
	e := c.e
	m := e.epoch.Add(1)
	e.marked.Store(m)
	return m
}

// TrustSince is SetWatched(true) for a watcher whose watches were all in
// place at mark (from Mark): the directory snapshots read by scans that
// began since then are kept, for any change after they were read reaches
// the watcher, and only older ones are dropped. The verdicts in the probe
// cache are kept too: they are facts about processes and flocks, bounded
// by their TTL, not about which files exist. So what the watcher reads as
// it starts (the IDE's first listing, made before the watches; then its
// confirmation by a stat per directory) is kept, not read again.
func (c Caches) TrustSince(mark uint64) {
	e := c.e
	// A scan that began before mark and stores after this drop is undone
	// by its own epoch check (store, then check): mark moved the epoch on.
	e.startTrust(func() { e.dirs.dropBefore(mark) })
}

// checkWatchedDir drops trust when the state dir is no longer the directory
// the watcher watches.
func (e *Engine) checkWatchedDir() {
	if !e.watched.Load() {
		return
	}
	e.watchMu.Lock()
	defer e.watchMu.Unlock()
	if !e.watched.Load() {
		return
	}
	id, err := statID(e.dir)
	if err == nil && id.dev == e.watchedDir.dev && id.ino == e.watchedDir.ino {
		return
	}
	e.log.Warn("the state directory is not the one being watched any more; listing without trusting snapshots", "dir", e.dir)
	e.watched.Store(false)
	e.invalidateAll()
}

// Watched reports what SetWatched last set.
func (c Caches) Watched() bool { return c.e.watched.Load() }
