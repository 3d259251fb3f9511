// Package watch turns file-system events in the Copilot CLI's state directory,
// and the exits of the processes holding its locks, into change events: the
// sessions whose state, holders or metadata changed, and those that vanished.
//
// A Watcher learns of file changes with fsnotify (or, in poll mode, by
// stat-ing session directory modification times), of holder exits from the
// kernel (Linux pidfd, macOS kqueue EVFILT_PROC, a wait on a Windows process
// handle; a one-second re-probe elsewhere), and of "starting" holders coming
// of age from a timer at the end of the engine's settle window. Each of these
// only marks sessions dirty; after a short debounce the dirty sessions are
// re-read from the engine with their cache entries dropped, and only those
// whose state, holders or metadata differ from what was last delivered are
// reported.
package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// Mode selects how the watcher learns of file changes.
type Mode string

const (
	ModeAuto   Mode = "auto"   // notify where it scales (inotify, Windows), poll on kqueue platforms
	ModeNotify Mode = "notify" // fsnotify on the state dir and every session dir
	ModePoll   Mode = "poll"   // fsnotify on the state dir and locked sessions, mtime polling for the rest
)

// ParseMode parses a --watch flag value; "" means ModeAuto.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeAuto:
		return ModeAuto, nil
	case ModeNotify, ModePoll:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown watch mode %q: want auto, notify or poll", s)
}

// Options configure a Watcher.
type Options struct {
	Mode         Mode          // "" means ModeAuto
	PollInterval time.Duration // poll mode's directory scan interval; 0 means a default
	Logger       *slog.Logger
}

// DefaultPollInterval is how often poll mode stats the session directories.
const DefaultPollInterval = time.Second

const (
	// debounce is how long after the first event of a burst the dirty
	// sessions are re-read: long enough for a CLI's .lock and .hold (about
	// 1 ms apart) to land in one notification, short enough to feel instant.
	// The batch is delivered once no event has arrived for this long.
	debounce = 10 * time.Millisecond

	// maxDebounce bounds how long a burst of events, each one arriving
	// within debounce of the last, can postpone delivery.
	maxDebounce = 100 * time.Millisecond

	// exitPollInterval is how often holders whose exit cannot be awaited
	// are re-probed.
	exitPollInterval = time.Second

	// settleMargin is added to the end of a holder's settle window before it
	// is re-probed, so that the engine's own clock has surely passed it.
	settleMargin = 25 * time.Millisecond

	// maxPollWatches caps the session directories poll mode watches with
	// fsnotify. On kqueue platforms every entry of a watched directory costs
	// a descriptor (about ten for a CLI's session directory); sessions
	// beyond the cap are still found by mtime.
	maxPollWatches = 8

	// quietAge is how long a session directory must have been left alone
	// for poll mode to stat it only every other interval.
	quietAge = time.Hour

	// recentMtime is how close to "now" a directory mtime may be and still
	// hide a later change: file-system timestamps come from a coarse clock,
	// so two changes a few milliseconds apart can leave the same mtime.
	recentMtime = 100 * time.Millisecond

	// rescanRetry is how long to wait before reading again after a read
	// failed for a reason other than the session being gone.
	rescanRetry = time.Second
)

// Change is one batch of changes, in the engine's own types.
type Change struct {
	Changed []sessionlocks.Session // full sessions, as Engine.List returns them
	Removed []string               // ids of sessions whose directory is gone
}

// Stats describe what the watcher is doing, for the status method.
type Stats struct {
	Mode      Mode   // the mode in force (auto resolved)
	Watching  bool   // true once Run has read its baseline, false after it returns
	Dirs      int    // directories watched with fsnotify
	Processes int    // holder processes watched for exit
	Events    uint64 // file and process events seen
	Rescans   uint64 // full rescans (start, overflow, fallback)
	Notified  uint64 // changes delivered

	// Sessions is the number of sessions the watcher knows of.
	Sessions int
	// Polled is the number of session directories found by mtime polling
	// (poll mode) rather than watched.
	Polled int
	// PolledProcesses is the number of holder processes re-probed every
	// second because their exit cannot be awaited on this platform.
	PolledProcesses int
	// StateDirPresent is false while the state directory does not exist
	// and the watcher waits for it on its nearest existing ancestor.
	StateDirPresent bool
	// Note says, in one sentence, why the mode in force differs from the one
	// asked for (for example the inotify watch limit was reached); "" if not.
	Note string
}

// Watcher watches one engine's state directory.
type Watcher struct {
	e             *sessionlocks.Engine
	dir           string
	mode          Mode // resolved; Run may degrade notify to poll
	interval      time.Duration
	log           *slog.Logger
	running       atomic.Bool
	started       chan struct{} // closed once Run has read its baseline
	baselineBegun chan struct{} // closed once Run begins its first listing (see Armed)
	baselineOnce  sync.Once

	statsMu sync.Mutex
	stats   Stats

	// testHookEvent, when set, runs before each fsnotify event or error is
	// handled; tests use it to stall the reader so the kernel queue overflows.
	testHookEvent func()
	// testHookAdd, when set, replaces fsnotify's Add for session directories.
	testHookAdd func(path string) error
	// testHookEarly, when set, runs after the listing made at start before
	// the session watches are added.
	testHookEarly func()
	// stateByMtime makes poll mode find new sessions by the state dir's
	// mtime instead of watching it: where fsnotify uses kqueue, watching a
	// directory opens every entry in it, and on a shared file system
	// notifications would miss other machines' sessions. Tests set it on
	// Linux too.
	stateByMtime bool
	// sharedNote says why poll mode was chosen for a shared file system.
	sharedNote string
	// newExitWatcher makes the exit watcher; tests replace it to exercise
	// the polling that platforms without exit events get.
	newExitWatcher func(exits chan<- int) exitWatcher
}

// New returns a watcher for e's state directory; it watches nothing until Run.
func New(e *sessionlocks.Engine, opts Options) (*Watcher, error) {
	if e == nil {
		return nil, errors.New("watch: nil engine")
	}
	mode, err := ParseMode(string(opts.Mode))
	if err != nil {
		return nil, err
	}
	if mode == ModeAuto {
		mode = autoMode(runtime.GOOS)
	}
	// File notifications report this machine's changes only: on a state
	// dir other machines share, another host's CLI would never be heard.
	// Every directory, the state dir included, is found by mtime instead.
	v := e.Status().Platform
	sharedNote := ""
	if v.Shared {
		mode = ModePoll
		sharedNote = "the state dir is on " + v.FileSystem + ", which other machines may share and whose changes file notifications do not report; polling directory mtimes"
	}
	if opts.PollInterval < 0 {
		return nil, fmt.Errorf("watch: negative poll interval %v", opts.PollInterval)
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	w := &Watcher{
		e:             e,
		dir:           e.StateDir(),
		mode:          mode,
		interval:      opts.PollInterval,
		log:           opts.Logger.With("component", "watch"),
		started:       make(chan struct{}),
		baselineBegun: make(chan struct{}),

		stateByMtime:   kqueueBackend(runtime.GOOS) || v.Shared,
		newExitWatcher: newExitWatcher,
		sharedNote:     sharedNote,
	}
	w.stats.Mode = mode
	w.stats.Note = sharedNote
	return w, nil
}

// autoMode is notify where one watch per directory is cheap (inotify,
// Windows, FEN) and poll where fsnotify uses kqueue.
func autoMode(goos string) Mode {
	if kqueueBackend(goos) {
		return ModePoll
	}
	return ModeNotify
}

// kqueueBackend reports whether fsnotify uses kqueue on goos, which holds a
// descriptor open for every file in every watched directory (fsnotify
// issues #129 and #358).
func kqueueBackend(goos string) bool {
	switch goos {
	case "darwin", "ios", "freebsd", "openbsd", "netbsd", "dragonfly":
		return true
	}
	return false
}

// Run watches until ctx is done, calling notify (never concurrently) with
// every change. It returns ctx.Err() or a fatal error. The sessions present
// when Run starts are its baseline and are not reported. Run may be called
// once.
func (w *Watcher) Run(ctx context.Context, notify func(Change)) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("watch: Run called twice")
	}
	l := newLoop(w)
	defer func() {
		l.close()
		w.setStats(func(s *Stats) { s.Watching = false; s.Dirs = 0; s.Processes = 0; s.PolledProcesses = 0 })
	}()
	return l.run(ctx, notify)
}

// Started is closed once Run has read its baseline: every session listed
// and, in notify mode, watched.
func (w *Watcher) Started() <-chan struct{} { return w.started }

// Armed is closed once Run begins its first listing of every session (or
// gave up before it could): in notify mode that is before it adds the
// session watches, and what changes before they are in place is delivered
// as a Change; in poll mode, after it took every directory's mtime. A
// listing begun after it shares that one (Engine.List runs one scan for
// concurrent callers), where one begun earlier would read every directory a
// second time beside it.
func (w *Watcher) Armed() <-chan struct{} { return w.baselineBegun }

// Stats returns the watcher's counters; safe to call concurrently with Run.
func (w *Watcher) Stats() Stats {
	w.statsMu.Lock()
	defer w.statsMu.Unlock()
	return w.stats
}

func (w *Watcher) setStats(f func(*Stats)) {
	w.statsMu.Lock()
	f(&w.stats)
	w.statsMu.Unlock()
}
