package sessionlocks

// What listings keep between calls: each session directory's snapshot
// (sessiondir.go), and each holder's verdict for a few seconds (the probe
// cache), keyed by its files' identities. Decisions use neither;
// Invalidate drops both for a session.

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// probeKey identifies one judged holder: the same files, the same versions
// of them, the same pid.
type probeKey struct {
	session string
	pid     int
	lock    fileID
	hold    fileID
}

type probeEntry struct {
	h       Holder
	expires time.Time
}

// caches are the probe cache and the snapshots, with their counters.
type caches struct {
	ttl time.Duration
	now func() time.Time

	mu     sync.Mutex
	probes map[probeKey]probeEntry
	snaps  map[string]*dirSnapshot
	puts   int
	gen    uint64 // counts drops

	hits, misses atomic.Uint64
}

func newCaches(ttl time.Duration, now func() time.Time) *caches {
	return &caches{ttl: ttl, now: now, probes: map[probeKey]probeEntry{}, snaps: map[string]*dirSnapshot{}}
}

// verdict returns a kept verdict for k that has not expired.
func (c *caches) verdict(k probeKey) (Holder, bool) {
	c.mu.Lock()
	e, ok := c.probes[k]
	c.mu.Unlock()
	if !ok || !c.now().Before(e.expires) {
		c.misses.Add(1)
		return Holder{}, false
	}
	c.hits.Add(1)
	e.h.Cached = true
	return e.h, true
}

// generation is the number of drops so far (see keepVerdict).
func (c *caches) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// keepVerdict keeps h for the TTL, unless something was dropped since gen;
// expired entries are swept now and then.
func (c *caches) keepVerdict(k probeKey, h Holder, gen uint64) {
	if c.ttl <= 0 {
		return
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	c.probes[k] = probeEntry{h: h, expires: now.Add(c.ttl)}
	if c.puts++; c.puts >= 1024 && c.puts >= len(c.probes) {
		c.puts = 0
		maps.DeleteFunc(c.probes, func(_ probeKey, e probeEntry) bool { return !now.Before(e.expires) })
	}
}

func (c *caches) snapshot(id string) *dirSnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snaps[id]
}

func (c *caches) keepSnapshot(id string, s *dirSnapshot, gen uint64) {
	c.mu.Lock()
	if c.gen == gen {
		c.snaps[id] = s
	}
	c.mu.Unlock()
}

// drop forgets what is kept about the sessions ids; none given: all.
func (c *caches) drop(ids ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if len(ids) == 0 {
		c.probes = map[probeKey]probeEntry{}
		ids = slices.Collect(maps.Keys(c.snaps))
	}
	gone := make(map[string]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
		if s := c.snaps[id]; s != nil {
			// Only its metadata is kept, for a workspace.yaml caught mid-rewrite.
			c.snaps[id] = &dirSnapshot{meta: s.meta}
		}
	}
	maps.DeleteFunc(c.probes, func(k probeKey, _ probeEntry) bool { return gone[k.session] })
}

// prune forgets the snapshots of sessions a full listing did not find.
func (c *caches) prune(found map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.DeleteFunc(c.snaps, func(id string, _ *dirSnapshot) bool { return !found[id] })
}

func (c *caches) stats() CacheStats {
	c.mu.Lock()
	n := len(c.probes)
	c.mu.Unlock()
	return CacheStats{TTL: c.ttl, Entries: n, Hits: c.hits.Load(), Misses: c.misses.Load()}
}
