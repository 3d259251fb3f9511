package watch

// The loop: the state of one Run, the select that feeds it events, exits
// and ticks, and the timers that batch what they mark dirty (debounce) and
// re-probe starting holders (settle).

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// loop is the state of one Run. Everything in it belongs to the Run
// goroutine, except exits, which the exit watchers send on.
type loop struct {
	w      *Watcher
	e      *sessionlocks.Engine
	caches sessionlocks.Caches // e.Caches(): where what the watcher sees goes
	dir    string

	fsw    *fsnotify.Watcher // nil when fsnotify could not start: then everything is polled
	dirOn  bool              // the state dir is watched (or, without fsnotify, present)
	anchor string            // the ancestor watched while the state dir is missing
	dirMt  int64             // without fsnotify: the state dir's mtime at the last rescan

	watched      map[string]bool                 // session ids whose directory fsnotify watches
	unwatched    int                             // notify mode: session dirs a watch could not be added to
	rescanFailed bool                            // the last full rescan could not read everything
	dirID        identity                        // the state dir watched, as of the last rescan
	identT       *time.Ticker                    // checks that the state dir is still dirID
	mtimes       pollSet                         // poll mode: every session directory's mtime
	ds           dirStat                         // poll mode: stats session dirs relative to the state dir
	last         map[string]sessionlocks.Session // what was last delivered (or the baseline)

	procs    map[int]*proc    // holder processes being watched, by pid
	sessPIDs map[string][]int // session id -> pids in procs it references
	settle   map[string]time.Time

	exits chan int
	ex    exitWatcher

	dirty      map[string]bool // sessions to re-read; true: the session dir itself may have come or gone (markDirty)
	rescan     bool
	firstDirty time.Time // when the pending batch began
	lastDirty  time.Time // the latest event of the pending batch

	debounceT    *time.Timer
	debounceC    <-chan time.Time
	settleT      *time.Timer
	settleC      <-chan time.Time
	settleAt     time.Time
	pollT        *time.Ticker // poll mode's directory scan
	pollTick     uint64       // counts pollDirs calls; picks the half of the quiet sessions to stat
	watchedSince uint64       // the engine's epoch once a full rescan's watches were in place; 0 otherwise
	confirming   bool         // the next full rescan confirms earlyListing's snapshots instead of dropping them
	exitT        *time.Ticker // polled holder processes
	retryT       *time.Timer  // a failed read's retry
	retryC       <-chan time.Time
	retryFull    bool            // the retry is a full rescan
	retryIDs     map[string]bool // sessions to read again on retry

	note string
}

func newLoop(w *Watcher) *loop {
	l := &loop{
		note:     w.sharedNote,
		w:        w,
		e:        w.e,
		caches:   w.e.Caches(),
		dir:      filepath.Clean(w.dir),
		watched:  map[string]bool{},
		mtimes:   newPollSet(),
		last:     map[string]sessionlocks.Session{},
		procs:    map[int]*proc{},
		sessPIDs: map[string][]int{},
		settle:   map[string]time.Time{},
		exits:    make(chan int, 64),
		dirty:    map[string]bool{},
		ds:       closedDirStat,
		retryIDs: map[string]bool{},
	}
	l.ex = w.newExitWatcher(l.exits)
	return l
}

func (l *loop) close() {
	l.ex.close()
	l.ds.close()
	if l.fsw != nil {
		l.fsw.Close()
	}
	if l.identT != nil {
		l.identT.Stop()
	}
	for _, t := range []*time.Timer{l.debounceT, l.settleT, l.retryT} {
		if t != nil {
			t.Stop()
		}
	}
	for _, t := range []*time.Ticker{l.pollT, l.exitT} {
		if t != nil {
			t.Stop()
		}
	}
}

func (l *loop) run(ctx context.Context, notify func(Change)) error {
	defer l.caches.SetWatched(false)
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		// Out of inotify instances, or no backend on this platform: every
		// directory, the state dir included, is then found by mtime.
		l.w.log.Warn("file notifications unavailable; polling directory mtimes instead", "err", err)
		l.degrade("file notifications are unavailable (" + err.Error() + ")")
	} else {
		l.fsw = fsw
	}
	t0 := time.Now()
	c := l.earlyListing(ctx)
	if h := l.w.testHookEarly; h != nil && c != nil {
		h()
	}
	l.fullRescan(ctx, c)
	if c != nil {
		l.deliver(*c, notify)
	}
	l.setTimers()
	l.w.setStats(func(s *Stats) { s.Watching = true })
	l.w.baselineOnce.Do(func() { close(l.w.baselineBegun) }) // no baseline listing was made (no state dir yet)
	close(l.w.started)
	l.w.log.Debug("baseline read", "sessions", len(l.last), "watchedDirs", len(l.watched), "processes", len(l.procs),
		"ms", float64(time.Since(t0).Microseconds())/1000)
	for {
		l.setTimers()
		var events <-chan fsnotify.Event
		var errs <-chan error
		if l.fsw != nil {
			events, errs = l.fsw.Events, l.fsw.Errors
		}
		var pollC, exitC <-chan time.Time
		if l.pollT != nil {
			pollC = l.pollT.C
		}
		if l.identT == nil {
			l.identT = time.NewTicker(time.Second)
		}
		if l.exitT != nil {
			exitC = l.exitT.C
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-events:
			if !ok {
				return errors.New("watch: fsnotify closed its event channel")
			}
			if h := l.w.testHookEvent; h != nil {
				h()
			}
			l.count(1)
			l.handleEvent(ev)
		case err, ok := <-errs:
			if !ok {
				return errors.New("watch: fsnotify closed its error channel")
			}
			if h := l.w.testHookEvent; h != nil {
				h()
			}
			l.handleError(err)
		case pid := <-l.exits:
			l.count(1)
			l.handleExit(pid)
		case <-l.debounceC:
			l.debounceC = nil
			if wait := l.holdOff(time.Now()); wait > 0 {
				l.debounceT = resetTimer(l.debounceT, wait)
				l.debounceC = l.debounceT.C
				continue
			}
			l.flush(ctx, notify)
		case <-l.settleC:
			l.settleC, l.settleAt = nil, time.Time{}
			l.settleDue()
		case <-pollC:
			l.pollDirs()
		case <-l.identT.C:
			l.checkDirIdentity()
		case <-exitC:
			l.pollExits()
		case <-l.retryC:
			l.retryC = nil
			l.rescan = l.rescan || l.retryFull
			for id := range l.retryIDs {
				l.markDirty(id, true)
			}
			l.retryFull = false
			clear(l.retryIDs)
		}
	}
}

// setTimers sets the timers the next select needs.
func (l *loop) setTimers() {
	if (l.rescan || len(l.dirty) > 0) && l.debounceC == nil {
		l.firstDirty = time.Now()
		l.debounceT = resetTimer(l.debounceT, debounce)
		l.debounceC = l.debounceT.C
	}
	var next time.Time
	for _, t := range l.settle {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	switch {
	case next.IsZero():
		if l.settleT != nil {
			l.settleT.Stop()
		}
		l.settleC, l.settleAt = nil, time.Time{}
	case !next.Equal(l.settleAt):
		l.settleT = resetTimer(l.settleT, time.Until(next))
		l.settleC, l.settleAt = l.settleT.C, next
	}
	needPoll := l.w.mode == ModePoll || l.fsw == nil
	switch {
	case needPoll && l.pollT == nil:
		l.pollT = time.NewTicker(l.w.interval)
	case !needPoll && l.pollT != nil:
		l.pollT.Stop()
		l.pollT = nil
	}
	polled := 0
	for _, p := range l.procs {
		if p.polled {
			polled++
		}
	}
	switch {
	case polled > 0 && l.exitT == nil:
		l.exitT = time.NewTicker(exitPollInterval)
	case polled == 0 && l.exitT != nil:
		l.exitT.Stop()
		l.exitT = nil
	}
	l.w.setStats(func(s *Stats) {
		s.Mode = l.w.mode
		s.Dirs = len(l.watched)
		if l.fsw != nil && !l.statePolled() && (l.dirOn || l.anchor != "") {
			s.Dirs++
		}
		s.Processes = len(l.procs) - polled
		s.PolledProcesses = polled
		s.Sessions = len(l.last)
		s.Polled = 0
		if l.w.mode == ModePoll || l.fsw == nil {
			s.Polled = max(0, l.mtimes.len()-len(l.watched))
		}
		s.StateDirPresent = l.dirOn
		s.Note = l.note
	})
}

// resetTimer (re)starts t to fire after d; since Go 1.23 Reset on a timer
// never leaves a stale value in its channel.
func resetTimer(t *time.Timer, d time.Duration) *time.Timer {
	if t == nil {
		return time.NewTimer(d)
	}
	t.Reset(d)
	return t
}

func (l *loop) count(n uint64) { l.w.setStats(func(s *Stats) { s.Events += n }) }

// markDirty queues a session for the next refresh. listChanged says the
// session directory itself may have come or gone, not only files in it or
// its holders: then the refresh has the engine read the list of sessions
// again too (InvalidateSession rather than InvalidateSessionFiles).
func (l *loop) markDirty(id string, listChanged bool) {
	l.dirty[id] = l.dirty[id] || listChanged
	l.lastDirty = time.Now()
}

// holdOff says how much longer to wait before flushing: while events keep
// arriving (a burst), until debounce has passed without one, but never
// longer than maxDebounce after the first.
func (l *loop) holdOff(now time.Time) time.Duration {
	quiet := now.Sub(l.lastDirty)
	left := l.firstDirty.Add(maxDebounce).Sub(now)
	if quiet >= debounce || left <= 0 {
		return 0
	}
	return min(debounce-quiet, left)
}
