package sessionlocks

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/keymutex"
)

// Defaults for Options.
const (
	DefaultSettle   = 5 * time.Second
	DefaultCacheTTL = 3 * time.Second
)

// Options configure an Engine. The zero value of every field but StateDir is usable.
type Options struct {
	// StateDir is the session-state directory; see DefaultStateDir.
	StateDir string
	// Settle is how young a lock may be and still be mid-open: a holder whose
	// lock is younger than this and whose process is alive is live "starting".
	Settle time.Duration
	// CacheTTL is how long a probe result is reused; 0 means DefaultCacheTTL,
	// a negative value disables the cache.
	CacheTTL time.Duration
	// Logger receives debug logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now. Tests only.
	Now func() time.Time
	// FSType, when set, is taken for the state dir's file-system type
	// instead of asking the kernel ("nfs", "9p", "ext4", ...): for tests of
	// shared file systems on machines that have none.
	FSType string
}

// Engine scans a state directory and judges its locks. It is safe for
// concurrent use.
type Engine struct {
	dir    string
	settle time.Duration
	log    *slog.Logger
	now    func() time.Time
	cache  *probeCache
	dirs   *dirCache
	ids    idsCache
	locks  *keymutex.Map // serialises this process's mutations per session: the CLI's operation lock keeps other processes out

	// epoch counts invalidations. A scan notes it before reading anything and
	// stores what it learned only if no invalidation happened meanwhile:
	// otherwise a scan that began before a lock appeared (or a holder died)
	// could cache its older view after the watcher had dropped it.
	epoch atomic.Uint64
	// marked is the epoch the last Mark started.
	marked atomic.Uint64
	// watched is set while a watcher reports every change under the state
	// dir through the Invalidate methods; see SetWatched.
	watched atomic.Bool

	flightMu sync.Mutex
	flight   *listFlight // the List in progress, if any

	// onInvalidating is a test hook: see testHookInvalidating.
	onInvalidating func()
	// beforeSignal, when set (tests), runs after an owner was proven and
	// before its pidfd is opened and it is verified again.
	beforeSignal func(*Owner)
	// beforeOpLock, when set (tests), runs when a mutation holds the
	// session's mutex and is about to take its operation lock.
	beforeOpLock func()

	// lastList is the last listing, while it may stand for the next one.
	lastList atomic.Pointer[listCache]

	// order is the last listing's sessions in sorted order, and the id
	// list (from the ids cache) they were the sorting of.
	orderMu sync.Mutex
	order   struct{ from, sorted []string }

	watchMu    sync.Mutex
	watchedDir fileID // the state dir's identity when SetWatched(true)

	// boot0 is the boot instant as computed when the engine started. Start
	// times are offsets from today's computation of it, lock mtimes were
	// stamped by the wall clock of their day: a clock step in between moves
	// one and not the other, by exactly how far the boot instant moved.
	boot0 time.Time

	nestedNS bool   // this process runs in a nested PID namespace (see Vantage)
	fsType   string // Options.FSType
	nsIdx    nsIndexCache
	skew     skewCache
}

// DefaultStateDir is $COPILOT_HOME/session-state, else ~/.copilot/session-state.
func DefaultStateDir() (string, error) {
	if h := os.Getenv("COPILOT_HOME"); h != "" {
		return filepath.Join(h, "session-state"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".copilot", "session-state"), nil
}

// New returns an Engine for opts.StateDir, which need not exist yet.
func New(opts Options) *Engine {
	if opts.Settle <= 0 {
		opts.Settle = DefaultSettle
	}
	switch {
	case opts.CacheTTL == 0:
		opts.CacheTTL = DefaultCacheTTL
	case opts.CacheTTL < 0:
		opts.CacheTTL = 0
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	dir := opts.StateDir
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	boot0, _ := bootTime()
	return &Engine{
		nestedNS: nestedPIDNamespace(),
		fsType:   opts.FSType,
		boot0:    boot0,
		dir:      dir,
		settle:   opts.Settle,
		log:      opts.Logger,
		now:      opts.Now,
		cache:    newProbeCache(opts.CacheTTL, opts.Now),
		dirs:     newDirCache(),
		locks:    keymutex.New(),
	}
}

// StateDir is the absolute state directory.
func (e *Engine) StateDir() string { return e.dir }

// StateDirExists reports whether the state directory is there: a missing
// one reads as "no sessions", which a mistyped --state-dir or a
// COPILOT_HOME the IDE and a terminal disagree on also look like.
func (e *Engine) StateDirExists() bool {
	fi, err := os.Stat(e.dir)
	return err == nil && fi.IsDir()
}

// Settle is the settle window in force.
func (e *Engine) Settle() time.Duration { return e.settle }

// CacheStats returns the probe cache's counters.
func (e *Engine) CacheStats() CacheStats { return e.cache.stats() }

// InvalidateSession drops every cached fact about one session, so that the
// next scan reads its directory and re-probes its holders.
//
// The epoch moves on twice: before the drops, so that a scan that began
// earlier and stores after them has its store undone (store, then check);
// and after them, so that a listing that began between the two, and so
// read what was about to be dropped, is not kept as the last listing for
// later ones to reuse (see cachedList).
func (e *Engine) InvalidateSession(id string) { e.invalidateSession(id, true) }

// InvalidateSessionFiles is InvalidateSession for a change to the files
// inside a session directory (its workspace.yaml, its lock files), which
// cannot add or remove a session: the list of session directories is kept.
// Reading that list again is most of what a listing of 10,000 sessions
// costs after one changed. The list stays checked against the state dir's
// own identity, which any session created or removed changes.
func (e *Engine) InvalidateSessionFiles(id string) { e.invalidateSession(id, false) }

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
func (e *Engine) InvalidatePID(pid int) {
	e.epoch.Add(1)
	e.testHookInvalidating()
	e.cache.dropPID(pid)
	e.epoch.Add(1)
}

// InvalidateAll empties every cache (after an event overflow, say). The
// epoch moves on before and after, as in InvalidateSession.
func (e *Engine) InvalidateAll() {
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
func (e *Engine) SetWatched(on bool) {
	if !on {
		e.watchMu.Lock()
		e.watched.Store(false)
		e.watchMu.Unlock()
		return
	}
	e.startTrust(e.InvalidateAll)
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
func (e *Engine) Mark() uint64 {
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
func (e *Engine) TrustSince(mark uint64) {
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
	e.InvalidateAll()
}

// Watched reports what SetWatched last set.
func (e *Engine) Watched() bool { return e.watched.Load() }

// tolerance is how far a process may seem to have started after its lock
// was written and still be its writer: the clock granularity, widened by any
// wall-clock step seen since the engine started (NTP fixing a bad clock, a
// VM catching up after its host slept), which shifts every computed start
// time against the lock times written before it. boot and bootErr are
// bootTime's answer, which the caller reads once per verdict.
func (e *Engine) tolerance(boot time.Time, bootErr error) time.Duration {
	t := startTolerance
	if e.boot0.IsZero() {
		return t
	}
	if bootErr == nil {
		d := boot.Sub(e.boot0)
		if d < 0 {
			d = -d
		}
		if d > 10*time.Millisecond {
			t += d
		}
	}
	return t
}
