// Package watch pushes the changes of the Copilot CLI's sessions: file
// events (fsnotify in notify mode; a listing each interval in poll mode),
// holder processes' exits and the ends of settle windows mark sessions
// dirty; after a short debounce they are listed again, and what differs from
// the last push is pushed as one Change. A missed event only delays a push:
// the engine checks every session against the disk.
package watch

import (
	"cmp"
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
	ModeAuto   Mode = "auto"   // notify where one watch per directory is cheap, poll elsewhere (see autoMode)
	ModeNotify Mode = "notify" // fsnotify on the state dir and every session dir
	ModePoll   Mode = "poll"   // every session listed and compared each interval
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
	PollInterval time.Duration // poll mode's interval; 0 means DefaultPollInterval
	Logger       *slog.Logger
}

// DefaultPollInterval is how often poll mode lists every session.
const DefaultPollInterval = time.Second

const (
	// debounce is how long the dirty sessions wait for more events: a CLI's
	// .lock and .hold (about 1 ms apart) land in one push.
	debounce         = 10 * time.Millisecond
	maxDebounce      = 100 * time.Millisecond // how long a burst can postpone a push
	exitPollInterval = time.Second            // how often processes not awaited are looked at
	// settleMargin is added to the end of a settle window before the holder
	// is judged again, so that the engine's clock has surely passed it.
	settleMargin = 25 * time.Millisecond
	retryDelay   = time.Second // before listing again after a listing failed
	// identityInterval is how often notify mode checks that the state dir
	// path still names the directory it watches: inotify says nothing when
	// a parent is moved or a symlink on the way retargeted.
	identityInterval = time.Second
)

// Change is one push, in the engine's own types.
type Change struct {
	Changed []sessionlocks.Session // full sessions, as Engine.List returns them, newest first
	Removed []string               // ids of sessions that are gone, sorted
}

// Stats describe what the watcher is doing, for the status method.
type Stats struct {
	Mode      Mode   // the mode in force (auto resolved; notify may have fallen back to poll)
	Watching  bool   // true once Run has its baseline, false after it returns
	Dirs      int    // directories watched with fsnotify: the state dir and every session dir
	Processes int    // processes watched for their exit, awaited or polled
	Events    uint64 // file and process events seen
	Rescans   uint64 // listings of every session
	Notified  uint64 // changes pushed
	Sessions  int    // sessions last listed
	Note      string // why the mode in force differs from the one asked for; "" if not
}

// Watcher watches one engine's state directory.
type Watcher struct {
	e        *sessionlocks.Engine
	dir      string
	settle   time.Duration
	mode     Mode // asked for, auto resolved; the loop may fall back to poll
	note     string
	interval time.Duration
	log      *slog.Logger
	running  atomic.Bool
	started  chan struct{}

	statsMu sync.Mutex
	stats   Stats

	// Tests replace these.
	testHookEvent  func()                  // runs before each fsnotify event or error is read
	testHookAdd    func(path string) error // stands in for fsnotify's Add on session dirs
	newExitWatcher func(chan<- int) exitWatcher
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
	if opts.PollInterval < 0 {
		return nil, fmt.Errorf("watch: negative poll interval %v", opts.PollInterval)
	}
	st := e.Status()
	if mode == ModeAuto {
		mode = autoMode(runtime.GOOS)
	}
	note := ""
	if st.Platform.Shared && mode == ModeNotify {
		// File events report this machine's changes only.
		mode = ModePoll
		note = "the state dir is on " + st.Platform.FileSystem + ", which other machines may share and whose changes file events do not report; polling"
	}
	w := &Watcher{
		e:              e,
		dir:            st.StateDir,
		settle:         st.Settle,
		mode:           mode,
		note:           note,
		interval:       cmp.Or(opts.PollInterval, DefaultPollInterval),
		log:            cmp.Or(opts.Logger, slog.Default()).With("component", "watch"),
		started:        make(chan struct{}),
		newExitWatcher: newExitWatcher,
	}
	w.stats.Mode, w.stats.Note = mode, note
	return w, nil
}

// autoMode is notify where fsnotify costs one watch per directory (inotify,
// FEN) and poll elsewhere: kqueue holds a descriptor per file (fsnotify
// #129), and Windows a handle and a buffer per directory.
func autoMode(goos string) Mode {
	switch goos {
	case "darwin", "ios", "freebsd", "openbsd", "netbsd", "dragonfly", "windows":
		return ModePoll
	}
	return ModeNotify
}

// Run watches until ctx is done, calling notify (never concurrently) with
// every change, and returns ctx.Err(). The sessions present when Run starts
// are its baseline, not pushed. Run may be called once.
func (w *Watcher) Run(ctx context.Context, notify func(Change)) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("watch: Run called twice")
	}
	l := newLoop(w, notify)
	defer func() {
		l.close()
		w.setStats(func(s *Stats) { s.Watching, s.Dirs, s.Processes = false, 0, 0 })
	}()
	return l.run(ctx)
}

// Started is closed once Run has its baseline: every session listed and,
// in notify mode, every directory watched.
func (w *Watcher) Started() <-chan struct{} { return w.started }

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
