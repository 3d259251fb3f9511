package sessionlocks

import (
	"sync"
	"sync/atomic"
	"time"
)

// probeKey identifies one judged lock: the same path, the same file version
// and the same pid. A CLI reusing the path rewrites the file (new mtime), and
// a .hold appearing or being replaced changes the key too, so a cached
// verdict is never applied to different evidence.
type probeKey struct {
	path string
	lock fileID // zero for an orphan .hold
	pid  int
	hold fileID
}

type probeEntry struct {
	h       Holder
	expires time.Time
}

// probeCache keeps verdicts for a TTL. It is what makes a listing of
// thousands of sessions cheap; decisions (canResume, reclaim, force) bypass it.
type probeCache struct {
	ttl  time.Duration
	now  func() time.Time
	mu   sync.Mutex
	m    map[probeKey]probeEntry
	puts int

	hits, misses atomic.Uint64
}

func newProbeCache(ttl time.Duration, now func() time.Time) *probeCache {
	return &probeCache{ttl: ttl, now: now, m: make(map[probeKey]probeEntry)}
}

func (c *probeCache) get(k probeKey) (Holder, bool) {
	if c.ttl <= 0 {
		c.misses.Add(1)
		return Holder{}, false
	}
	c.mu.Lock()
	e, ok := c.m[k]
	c.mu.Unlock()
	if !ok || !c.now().Before(e.expires) {
		c.misses.Add(1)
		return Holder{}, false
	}
	c.hits.Add(1)
	h := e.h
	h.Cached = true
	return h, true
}

// put keeps h unless an invalidation happened since the probe began (epoch
// read then as began). It stores first and checks after: an invalidation
// bumps the epoch before it drops, so whichever way the two interleave,
// a verdict from before an invalidation does not survive it.
func (c *probeCache) put(k probeKey, h Holder, began uint64, epoch *atomic.Uint64) {
	if c.ttl <= 0 || epoch.Load() != began {
		return
	}
	now := c.now()
	c.mu.Lock()
	c.m[k] = probeEntry{h: h, expires: now.Add(c.ttl)}
	// Sweep expired entries now and then, so locks that vanished do not
	// accumulate; amortised over many puts it costs nothing per put.
	if c.puts++; c.puts >= 1024 && c.puts >= len(c.m) {
		c.puts = 0
		for k, e := range c.m {
			if !now.Before(e.expires) {
				delete(c.m, k)
			}
		}
	}
	c.mu.Unlock()
	if epoch.Load() != began {
		c.mu.Lock()
		delete(c.m, k)
		c.mu.Unlock()
	}
}

func (c *probeCache) dropWhere(f func(Holder) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		if f(e.h) {
			delete(c.m, k)
		}
	}
}

func (c *probeCache) dropSession(id string) {
	c.dropWhere(func(h Holder) bool { return h.SessionID == id })
}
func (c *probeCache) dropPID(pid int) { c.dropWhere(func(h Holder) bool { return h.PID == pid }) }

func (c *probeCache) clear() {
	c.mu.Lock()
	c.m = make(map[probeKey]probeEntry)
	c.mu.Unlock()
}

func (c *probeCache) stats() CacheStats {
	c.mu.Lock()
	n := len(c.m)
	c.mu.Unlock()
	return CacheStats{TTL: c.ttl, Entries: n, Hits: c.hits.Load(), Misses: c.misses.Load()}
}

// dirCache remembers what each session directory held, keyed by the
// directory's own identity (inode and mtime): creating or removing a lock
// changes the directory's mtime, so an unchanged directory need not be read
// again. A directory modified within racyWindow of being read is not trusted,
// because file-system timestamps are coarse (a jiffy, or 2 s on FAT) and a
// second change in the same tick would leave the mtime as it was.
type dirCache struct {
	// m maps session id to dirSnapshot. A sync.Map: a watched listing is
	// one load per session from several goroutines, mostly reads of keys
	// that do not change, the case sync.Map is made for.
	m sync.Map

	mu sync.Mutex
	// lastMeta keeps the metadata of dropped snapshots, so that a
	// workspace.yaml caught mid-rewrite right after an invalidation still
	// has something to fall back on.
	lastMeta map[string]metadata
	n        atomic.Int64 // entries in m
	nLast    atomic.Int64 // len(lastMeta), read without mu
}

const racyWindow = 2 * time.Second

type dirSnapshot struct {
	path   string
	dir    fileID
	readAt time.Time
	files  []lockFile // inuse.* files, sorted (sortLockFiles)
	// huge: more than maxListedHolders holders, whose refs are not kept
	// but made as they are judged (see judgeHuge).
	huge   bool
	meta   metadata
	metaID fileID // workspace.yaml as parsed; zero if absent
	metaAt time.Time
	// metaRead is when workspace.yaml was last read (UnixNano): its
	// identity vouches for its content only if it was older than
	// racyWindow then (a same-size rewrite within one timestamp tick
	// leaves the identity as it was).
	metaRead int64
	refs     []lockRef // the holders' files as last stat'ed; reused only while watched
	epoch    uint64    // the engine's epoch when the scan that read it began (see TrustSince)
}

func newDirCache() *dirCache {
	return &dirCache{lastMeta: make(map[string]metadata)}
}

// peekPtr returns the snapshot for id whatever the directory looks like
// now (only a watched engine may use it as it is: every change drops it), or
// nil. The snapshot must not be modified.
func (c *dirCache) peekPtr(id string) *dirSnapshot {
	if v, ok := c.m.Load(id); ok {
		return v.(*dirSnapshot)
	}
	return nil
}

// droppedMeta is the metadata last read for id when its snapshot was
// dropped.
func (c *dirCache) droppedMeta(id string) metadata {
	if c.nLast.Load() == 0 { // a cold scan: no mutex shared by every worker
		return metadata{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastMeta[id]
}

// valid returns the snapshot for id if the directory is still dir and the
// snapshot was taken safely after the directory's last change; nil if not.
// The snapshot must not be modified.
func (c *dirCache) valid(id string, dir fileID) *dirSnapshot {
	s := c.peekPtr(id)
	if s == nil || s.dir != dir || s.readAt.Sub(dir.modTime()) < racyWindow {
		return nil
	}
	return s
}

// store keeps s unless an invalidation happened since the scan that made it
// began (see probeCache.put: store, then check, then undo).
func (c *dirCache) store(id string, p *dirSnapshot, began uint64, epoch *atomic.Uint64) {
	if epoch.Load() != began {
		return
	}
	if _, loaded := c.m.Swap(id, p); !loaded {
		c.n.Add(1)
	}
	if epoch.Load() != began {
		if c.m.CompareAndDelete(id, p) {
			c.n.Add(-1)
		}
	}
}

func (c *dirCache) drop(id string) {
	if v, ok := c.m.LoadAndDelete(id); ok {
		c.n.Add(-1)
		c.mu.Lock()
		c.lastMeta[id] = v.(*dirSnapshot).meta
		c.nLast.Store(int64(len(c.lastMeta)))
		c.mu.Unlock()
	}
}

// dropBefore drops the snapshots read by scans that began before epoch mark.
func (c *dirCache) dropBefore(mark uint64) {
	c.m.Range(func(k, v any) bool {
		if v.(*dirSnapshot).epoch < mark {
			c.drop(k.(string))
		}
		return true
	})
}

func (c *dirCache) clear() {
	c.m.Range(func(k, _ any) bool {
		c.drop(k.(string))
		return true
	})
}

// size is how many snapshots are kept; a listing compares it with the
// sessions it found to know whether to prune, so it is counted, not
// ranged over.
func (c *dirCache) size() int { return int(c.n.Load()) }

// prune forgets sessions that are no longer in the state dir.
func (c *dirCache) prune(keep map[string]struct{}) {
	c.m.Range(func(k, _ any) bool {
		if _, ok := keep[k.(string)]; !ok {
			if _, ok := c.m.LoadAndDelete(k); ok {
				c.n.Add(-1)
			}
		}
		return true
	})
	c.mu.Lock()
	for id := range c.lastMeta {
		if _, ok := keep[id]; !ok {
			delete(c.lastMeta, id)
		}
	}
	c.nLast.Store(int64(len(c.lastMeta)))
	c.mu.Unlock()
}

// idsCache keeps the state dir's list of session ids, valid while the state
// dir's own mtime is unchanged (creating or removing a session changes it)
// and not racy.
type idsCache struct {
	mu     sync.Mutex
	dir    fileID
	readAt time.Time
	ids    []string
	ok     bool
}

func (c *idsCache) lookup(dir fileID) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || c.dir != dir || c.readAt.Sub(dir.modTime()) < racyWindow {
		return nil, false
	}
	return c.ids, true
}

func (c *idsCache) store(dir fileID, readAt time.Time, ids []string, began uint64, epoch *atomic.Uint64) {
	if epoch.Load() != began {
		return
	}
	c.mu.Lock()
	c.dir, c.readAt, c.ids, c.ok = dir, readAt, ids, true
	c.mu.Unlock()
	if epoch.Load() != began {
		c.drop()
	}
}

func (c *idsCache) drop() {
	c.mu.Lock()
	c.ok = false
	c.mu.Unlock()
}
