package watch

// The loop: the state of one Run, and the select that turns file events,
// exits, settle ends and ticks into dirty sessions, flushed after a debounce.

import (
	"context"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// loop is the state of one Run; all of it belongs to the Run goroutine.
type loop struct {
	w      *Watcher
	e      *sessionlocks.Engine
	notify func(Change)
	mode   Mode   // the mode in force
	note   string // why it differs from the one asked for
	files  *dirs  // notify mode's watches; nil in poll mode

	last map[string]sessionlocks.Session // what was last pushed (or the baseline), by id

	dirty      map[string]bool  // sessions to list again; true: the session dir itself came or went
	rescan     bool             // list every session
	dropAll    bool             // and drop everything the engine keeps first: events were lost
	firstDirty time.Time        // when the pending batch began
	lastDirty  time.Time        // its latest event
	flushT     *time.Timer      // stopped while no flush is due
	flushC     <-chan time.Time // flushT.C, nil while no flush is due

	procs   map[int]*proc        // processes watched for their exit, by pid
	settle  map[string]time.Time // when each session's starting holders leave their settle window
	settleT *time.Timer          // as flushT, for the earliest settle end
	settleC <-chan time.Time
	exits   chan int
	ex      exitWatcher

	tick     *time.Ticker  // poll mode: the listing; notify mode: the state dir's identity; both: polled processes
	listedAt time.Time     // when the last listing of every session began
	listCost time.Duration // and how long it took
}

// pollShare: poll mode lists no more often than every pollShare times what
// a listing takes (1% of the time), for a laptop's battery, yet at least
// every maxPollGap, so that a change shows within seconds however slow the
// disk; exits are still pushed at once.
const (
	pollShare  = 100
	maxPollGap = 3 * time.Second
)

func newLoop(w *Watcher, notify func(Change)) *loop {
	l := &loop{
		w:       w,
		e:       w.e,
		notify:  notify,
		mode:    w.mode,
		note:    w.note,
		last:    map[string]sessionlocks.Session{},
		dirty:   map[string]bool{},
		procs:   map[int]*proc{},
		settle:  map[string]time.Time{},
		exits:   make(chan int, 64),
		flushT:  time.NewTimer(time.Hour),
		settleT: time.NewTimer(time.Hour),
	}
	// Stopped until armed (since Go 1.23 a Reset leaves no stale value).
	l.flushT.Stop()
	l.settleT.Stop()
	l.ex = w.newExitWatcher(l.exits)
	return l
}

func (l *loop) close() {
	l.ex.close()
	if l.files != nil {
		l.files.close()
	}
	l.flushT.Stop()
	l.settleT.Stop()
	if l.tick != nil {
		l.tick.Stop()
	}
}

func (l *loop) run(ctx context.Context) error {
	t0 := time.Now()
	if l.mode == ModeNotify {
		var err error
		if l.files, err = startDirs(l.w); err != nil { // nil files on error
			l.fallBack(err)
		}
	}
	l.rescan = true
	l.flush(ctx, false) // the baseline: not pushed
	l.listCost = 0      // a cold listing's: the next tick lists, and measures a warm one
	l.tick = time.NewTicker(l.tickEvery())
	l.publish()
	l.w.setStats(func(s *Stats) { s.Watching = true })
	close(l.w.started)
	l.w.log.Debug("baseline read", "mode", l.mode, "sessions", len(l.last), "processes", len(l.procs),
		"ms", float64(time.Since(t0).Microseconds())/1000)
	for {
		l.setTimers()
		l.publish()
		var wake <-chan struct{}
		if l.files != nil {
			wake = l.files.pending.wake
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
			l.takeEvents()
		case pid := <-l.exits:
			l.w.setStats(func(s *Stats) { s.Events++ })
			l.exited(pid)
		case <-l.flushC:
			l.flushC = nil
			if wait := l.holdOff(time.Now()); wait > 0 {
				l.armFlush(wait)
				continue
			}
			l.flush(ctx, true)
		case <-l.settleC:
			l.settleC = nil
			l.settleDue()
		case <-l.tick.C:
			l.onTick()
		}
	}
}

func (l *loop) tickEvery() time.Duration {
	if l.mode == ModePoll {
		return l.w.interval
	}
	return identityInterval
}

// onTick lists every session in poll mode, checks the state dir in notify
// mode, and has the sessions of processes that cannot be awaited listed.
func (l *loop) onTick() {
	l.pollProcs()
	switch {
	case l.mode == ModePoll:
		l.rescan = l.rescan || time.Since(l.listedAt) >= min(pollShare*l.listCost, maxPollGap)
	case l.files.replaced():
		l.w.log.Info("the state directory came, went or was replaced; listing every session", "dir", l.w.dir)
		l.rescan, l.dropAll = true, true
	}
}

// takeEvents moves what the event reader saw into the dirty sessions.
func (l *loop) takeEvents() {
	ids, rescan, n := l.files.pending.take()
	l.w.setStats(func(s *Stats) { s.Events += n })
	for id, dirChanged := range ids {
		l.markDirty(id, dirChanged)
	}
	if rescan {
		l.rescan, l.dropAll = true, true
		l.lastDirty = time.Now()
	}
}

// markDirty queues a session to be listed again; dirChanged says its
// directory may have come or gone.
func (l *loop) markDirty(id string, dirChanged bool) {
	l.dirty[id] = l.dirty[id] || dirChanged
	l.lastDirty = time.Now()
}

// setTimers arms the flush when something is due and the settle timer for
// the earliest settle end.
func (l *loop) setTimers() {
	if (l.rescan || len(l.dirty) > 0) && l.flushC == nil {
		l.firstDirty = time.Now()
		l.armFlush(debounce)
	}
	var next time.Time
	for _, t := range l.settle {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	if next.IsZero() {
		l.settleT.Stop()
		l.settleC = nil
	} else {
		l.settleT.Reset(time.Until(next))
		l.settleC = l.settleT.C
	}
}

func (l *loop) armFlush(d time.Duration) {
	l.flushT.Reset(d)
	l.flushC = l.flushT.C
}

// holdOff says how much longer to wait before flushing: until debounce has
// passed without an event, at most maxDebounce after the first.
func (l *loop) holdOff(now time.Time) time.Duration {
	quiet := now.Sub(l.lastDirty)
	left := l.firstDirty.Add(maxDebounce).Sub(now)
	if quiet >= debounce || left <= 0 {
		return 0
	}
	return min(debounce-quiet, left)
}

func (l *loop) publish() {
	dirs := 0
	if l.files != nil {
		dirs = l.files.count()
	}
	l.w.setStats(func(s *Stats) {
		s.Mode, s.Note = l.mode, l.note
		s.Dirs, s.Processes, s.Sessions = dirs, len(l.procs), len(l.last)
	})
}
