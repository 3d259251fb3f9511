package sessionlocks

// The Engine: its options, construction, and the facts status reports.

import (
	"cmp"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
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
	StateDir string // the session-state directory; see DefaultStateDir
	// Settle is how young a lock may be and still be mid-open (live "starting").
	Settle time.Duration
	// CacheTTL is how long a probe result is reused; 0 means DefaultCacheTTL,
	// a negative value disables the cache.
	CacheTTL time.Duration
	Logger   *slog.Logger     // nil means slog.Default()
	Now      func() time.Time // nil means time.Now; tests only
	// FSType is taken for the state dir's file-system type ("nfs", "9p")
	// instead of asking the kernel: for tests of shared file systems.
	FSType string
}

// Engine judges the sessions of one state directory. It is safe for
// concurrent use.
type Engine struct {
	dir    string
	settle time.Duration
	log    *slog.Logger
	now    func() time.Time
	caches *caches
	locks  *keymutex.Map // this process's mutations, per session (the operation lock keeps others out)

	// boot0 is the boot instant when the engine started: a wall-clock step
	// since moves today's one (and every start time) by the step's size.
	boot0 time.Time

	nestedNS    bool   // this process runs in a nested PID namespace
	fsType      string // Options.FSType
	nsIdx       nsIndexCache
	skew        skewCache
	launchers   launchers
	unrecovered sync.Map      // sessions recovery left set-aside files in (session.go)
	listing     chan struct{} // one listing of every session at a time (list.go)

	// Test hooks: beforeSignal runs after an owner was proven and before it
	// is signalled; beforeOpLock before a mutation takes the operation
	// lock; noOwnerProof makes every owner unproven.
	beforeSignal func(*Owner)
	beforeOpLock func()
	noOwnerProof bool
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
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
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
		caches:   newCaches(opts.CacheTTL, opts.Now),
		locks:    keymutex.New(),
		listing:  make(chan struct{}, 1),
	}
}

// tolerance is how far a process may seem to have started after its lock
// was written and still be its writer: the clock granularity, widened by any
// wall-clock step seen since the engine started (NTP, a VM resumed), which
// shifts every start time against the lock times written before it. boot
// and bootErr are bootTime's answer.
func (e *Engine) tolerance(boot time.Time, bootErr error) time.Duration {
	if d := boot.Sub(e.boot0).Abs(); !e.boot0.IsZero() && bootErr == nil && d > 10*time.Millisecond {
		return startTolerance + d
	}
	return startTolerance
}

// Status is what the engine reports of itself.
type Status struct {
	StateDir string
	// StateDirExists is false when the state directory is not there: "no
	// sessions" then may be a mistyped --state-dir.
	StateDirExists bool
	Settle         time.Duration
	Cache          CacheStats
	Platform       Platform
}

// Status reports the state dir, the settle window, the probe cache and
// what the engine can see from where it runs.
func (e *Engine) Status() Status {
	return Status{
		StateDir:       e.dir,
		StateDirExists: e.checkStateDir() == nil,
		Settle:         e.settle,
		Cache:          e.caches.stats(),
		Platform:       e.platform(),
	}
}

// Invalidate drops what the engine keeps about the sessions ids (every
// session when none is given), so that the next listing reads them afresh.
func (e *Engine) Invalidate(ids ...string) { e.caches.drop(ids...) }

// checkStateDir says whether the state dir is there to read: nil, an error
// wrapping fs.ErrNotExist when it is missing, else a *StateDirError.
func (e *Engine) checkStateDir() error {
	id, err := statID(e.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return err
	case err != nil:
		return &StateDirError{Path: e.dir, Err: err}
	case id.mode != uint32(fs.ModeDir):
		return &StateDirError{Path: e.dir, Err: errors.New("not a directory")}
	}
	return nil
}
