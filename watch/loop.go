package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// loop is the state of one Run. Everything in it belongs to the Run
// goroutine, except exits, which the exit watchers send on.
type loop struct {
	w   *Watcher
	e   *sessionlocks.Engine
	dir string

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

	debounceT  *time.Timer
	debounceC  <-chan time.Time
	settleT    *time.Timer
	settleC    <-chan time.Time
	settleAt   time.Time
	pollT      *time.Ticker // poll mode's directory scan
	pollTick   uint64       // counts pollDirs calls; picks the half of the quiet sessions to stat
	armed      uint64       // the engine's epoch once a full rescan's watches were in place; 0 otherwise
	confirming bool         // the next full rescan confirms earlyListing's snapshots instead of dropping them
	exitT      *time.Ticker // polled holder processes
	retryT     *time.Timer  // a failed read's retry
	retryC     <-chan time.Time
	retryFull  bool            // the retry is a full rescan
	retryIDs   map[string]bool // sessions to read again on retry

	note string
}

// proc is one holder process being watched for exit.
type proc struct {
	start    time.Time
	sessions map[string]bool
	polled   bool // no exit event source: its sessions are re-probed every second
	exited   bool // its exit was seen; never awaited again
}

func newLoop(w *Watcher) *loop {
	l := &loop{
		note:     w.sharedNote,
		w:        w,
		e:        w.e,
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
	defer l.e.SetWatched(false)
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
	l.arm()
	l.w.setStats(func(s *Stats) { s.Watching = true })
	l.w.armOnce.Do(func() { close(l.w.armed) }) // no baseline listing was made (no state dir yet)
	close(l.w.started)
	l.w.log.Debug("baseline read", "sessions", len(l.last), "watchedDirs", len(l.watched), "processes", len(l.procs),
		"ms", float64(time.Since(t0).Microseconds())/1000)
	for {
		l.arm()
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

// arm sets the timers the next select needs.
func (l *loop) arm() {
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

// isSessionName tells a session directory's name from the other entries of
// the state dir (.session-operation-locks and the like).
func isSessionName(name string) bool {
	return !strings.HasPrefix(name, ".") && sessionlocks.ValidateID(name) == nil
}

// relevantFile reports whether a file inside a session directory can change
// what the engine says about the session. events.jsonl, which a running CLI
// appends to constantly, cannot.
func relevantFile(name string) bool {
	return name == "workspace.yaml" || strings.HasPrefix(name, "inuse.")
}

func (l *loop) handleEvent(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	if !l.dirOn {
		// Waiting on an ancestor (often the home directory, which sees a
		// lot of traffic): only its child on the way to the state dir, or
		// the ancestor itself going away, matters.
		if name == l.anchor || name == pathToward(l.anchor, l.dir) {
			l.rescan = true
		}
		return
	}
	if name == l.dir {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			l.rescan = true
			l.e.InvalidateAll()
			l.updateTrust()
		}
		return
	}
	// What the engine knows of a session is dropped the moment an event
	// says it changed, not when the debounced re-read comes: a watched
	// engine (see updateTrust) serves listings from its snapshots until
	// told otherwise.
	parent, base := filepath.Split(name)
	parent = filepath.Clean(parent)
	switch {
	case parent == l.dir:
		if !isSessionName(base) || !(ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
			return
		}
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			l.unwatchSession(base)
		}
		if ev.Has(fsnotify.Create) && l.w.mode == ModeNotify {
			// Watch before the session is read, so nothing written after the
			// read goes unseen.
			l.watchSession(base)
		}
		l.e.InvalidateSession(base)
		l.markDirty(base, true)
	case filepath.Dir(parent) == l.dir:
		id := filepath.Base(parent)
		if isSessionName(id) && relevantFile(base) {
			l.e.InvalidateSessionFiles(id)
			l.markDirty(id, false)
		}
	}
}

// updateTrust tells the engine whether every change under the state dir now
// reaches handleEvent: only in notify mode, with the state dir itself and
// every session dir watched. Then the engine may list from its snapshots
// without a stat per session; otherwise it validates each one.
func (l *loop) updateTrust() {
	trust := l.w.mode == ModeNotify && l.fsw != nil && l.dirOn && l.unwatched == 0 && !l.rescan && !l.rescanFailed
	if trust && l.armed != 0 {
		// Straight after a full rescan whose listing began once every
		// watch was in place (l.armed): what it read may be trusted.
		l.e.TrustSince(l.armed)
	} else {
		l.e.SetWatched(trust)
	}
	l.armed = 0
}

// identity is a directory's device and inode.
type identity struct{ dev, ino uint64 }

// checkDirIdentity notices, within a second, that the state dir path names
// another directory than the one watched: inotify reports nothing when a
// parent is moved or a symlink on the way is retargeted.
func (l *loop) checkDirIdentity() {
	if !l.dirOn || l.dirID == (identity{}) {
		return
	}
	if id, ok := dirIdentity(l.dir); ok && id != l.dirID || !ok {
		l.w.log.Info("the state directory was replaced; rescanning", "dir", l.dir)
		l.e.InvalidateAll()
		l.rescan = true
		l.updateTrust()
	}
}

func (l *loop) handleError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		l.w.log.Warn("file event queue overflowed; rescanning every session")
		// Events were lost: nothing cached may be trusted until the rescan.
		l.rescan = true
		l.e.InvalidateAll()
		l.updateTrust()
		return
	}
	l.w.log.Warn("file watch error", "err", err)
}

func (l *loop) handleExit(pid int) {
	p := l.procs[pid]
	if p == nil || p.exited {
		return
	}
	// Polled from now on: if the engine still calls it alive (it should
	// not), it is looked at every second rather than awaited again.
	p.exited, p.polled = true, true
	l.ex.remove(pid)
	l.e.InvalidatePID(pid)
	for id := range p.sessions {
		l.markDirty(id, false)
	}
}

// settleDue re-probes the sessions whose starting holders have come of age;
// no file changes when a "starting" lock becomes "hold-locked".
func (l *loop) settleDue() {
	now := time.Now()
	for id, t := range l.settle {
		if !t.After(now) {
			delete(l.settle, id)
			l.markDirty(id, false)
		}
	}
}

// pollExits re-probes the sessions of holders whose exit cannot be awaited.
func (l *loop) pollExits() {
	for pid, p := range l.procs {
		if p.polled {
			l.e.InvalidatePID(pid)
			for id := range p.sessions {
				l.markDirty(id, false)
			}
		}
	}
}

// pollDirs finds changed session directories by their mtime. Directories
// changed within quietAge are looked at on every tick, the others (most of
// a large state dir: sessions nobody touched for weeks) on every other
// tick, alternating halves: a stat per session per tick was nearly all of
// poll mode's idle CPU (10,000 sessions: 1.5%), and a lock appearing in an
// old session is still seen within two intervals.
func (l *loop) pollDirs() {
	if l.statePolled() && l.pollStateDir() {
		return
	}
	if l.ds.gone() {
		l.rescan = true
		return
	}
	now := time.Now().UnixNano()
	l.pollTick++
	ents := l.mtimes.ents
	// From the end: a deletion moves the last entry, already looked at,
	// into the place of the one deleted.
	for i := len(ents) - 1; i >= 0; i-- {
		e := &ents[i]
		if !e.recheck && now-e.ns > int64(quietAge) && e.half != byte(l.pollTick&1) {
			continue // a quiet session: half of them are looked at on each tick
		}
		ns, ok := l.ds.mtime(e.name)
		switch {
		case !ok:
			l.markDirty(e.id, true) // gone
			l.mtimes.del(e.id)
		case ns != e.ns || e.recheck:
			e.mtime = mtime{ns: ns, recheck: now-ns < int64(recentMtime)}
			l.markDirty(e.id, false)
		}
	}
}

// statePolled reports whether the state dir is polled rather than watched:
// without fsnotify, and in poll mode where fsnotify uses kqueue, which would
// hold a descriptor open for every session directory in it.
func (l *loop) statePolled() bool {
	return l.fsw == nil || (l.w.mode == ModePoll && l.w.stateByMtime)
}

// pollStateDir stands in for the state dir's watch when there is none: a
// new session directory changes the state dir's mtime. It reports whether
// a full rescan is due (the state dir appeared or vanished).
func (l *loop) pollStateDir() bool {
	mt, ok := dirMtime(l.dir)
	if ok != l.dirOn {
		l.rescan = true
		return true
	}
	if !ok || mt == l.dirMt {
		return false
	}
	l.dirMt = mt
	if time.Now().UnixNano()-mt < int64(recentMtime) {
		l.dirMt = -1 // a coarse timestamp may hide a later change: list again next tick
	}
	// The state dir may have been replaced under the same path.
	l.ds.close()
	l.ds = openDirStat(l.dir)
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		l.rescan = true
		return true
	}
	for _, de := range ents {
		if id := de.Name(); de.IsDir() && isSessionName(id) {
			if !l.mtimes.has(id) {
				l.markDirty(id, true) // new
			}
		}
	}
	return false
}

// flush re-reads the dirty sessions (or everything, after an overflow) and
// delivers what changed.
func (l *loop) flush(ctx context.Context, notify func(Change)) {
	var c Change
	if l.rescan {
		l.rescan = false
		clear(l.dirty)
		l.fullRescan(ctx, &c)
	} else {
		ids := make([]string, 0, len(l.dirty))
		for id := range l.dirty {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			if l.dirty[id] {
				l.e.InvalidateSession(id)
			} else {
				l.e.InvalidateSessionFiles(id)
			}
			for _, h := range l.last[id].Holders {
				l.e.InvalidatePID(h.PID)
			}
		}
		clear(l.dirty)
		l.refreshAll(ctx, ids, &c)
		if ctx.Err() != nil {
			return
		}
	}
	l.deliver(c, notify)
}

// deliver notifies c unless it is empty.
func (l *loop) deliver(c Change, notify func(Change)) {
	if len(c.Changed) == 0 && len(c.Removed) == 0 {
		return
	}
	slices.SortStableFunc(c.Changed, func(a, b sessionlocks.Session) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	slices.Sort(c.Removed)
	l.w.setStats(func(s *Stats) { s.Notified++ })
	notify(c)
}

// refreshAll re-reads the sessions ids and adds those that changed or
// vanished to c. One engine call reads them all in parallel; if one of them
// is gone (or the call fails otherwise) each is read on its own.
func (l *loop) refreshAll(ctx context.Context, ids []string, c *Change) {
	if l.w.mode == ModePoll {
		for _, id := range ids {
			if !l.mtimes.has(id) {
				// A session new to poll mode: its mtime is taken before it
				// is read, so that whatever lands after the read is polled.
				l.stampMtime(id)
			}
		}
	}
	if len(ids) > 1 {
		if ss, err := l.e.Sessions(ctx, ids); err == nil && len(ss) == len(ids) {
			for _, s := range ss {
				if l.update(s) {
					c.Changed = append(c.Changed, s)
				}
			}
			return
		}
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		l.refresh(ctx, id, c)
	}
}

// refresh re-reads one session and adds it to c if it changed or vanished.
func (l *loop) refresh(ctx context.Context, id string, c *Change) {
	ss, err := l.e.Sessions(ctx, []string{id})
	switch {
	case errors.Is(err, sessionlocks.ErrNotFound) || errors.Is(err, sessionlocks.ErrInvalidID):
		if _, ok := l.last[id]; ok {
			c.Removed = append(c.Removed, id)
		}
		l.forget(id)
		if !l.present() {
			l.rescan = true
		}
	case err != nil:
		if errors.Is(err, sessionlocks.ErrStateDir) || !l.present() {
			l.rescan = true
			return
		}
		l.w.log.Warn("re-reading a session failed; retrying", "session", id, "err", err, "in", rescanRetry)
		l.retryIDs[id] = true
		l.armRetry()
	case len(ss) == 1:
		if l.update(ss[0]) {
			c.Changed = append(c.Changed, ss[0])
		}
	}
}

func (l *loop) armRetry() {
	if l.retryC == nil {
		l.retryT = resetTimer(l.retryT, rescanRetry)
		l.retryC = l.retryT.C
	}
}

func (l *loop) present() bool {
	fi, err := os.Stat(l.dir)
	return err == nil && fi.IsDir()
}

// earlyListing lists every session at start before any session dir is
// watched, and the IDE's first listSessions shares it (see Armed): adding
// the watches took as long as the listing, and the IDE waited for both.
// What it read is confirmed by the full rescan that follows, a stat per
// directory once the watches are in place, and whatever changed in
// between is delivered as a change; the Change for that is returned, nil if
// no early listing was made.
func (l *loop) earlyListing(ctx context.Context) *Change {
	if l.w.mode != ModeNotify || l.fsw == nil || !l.present() {
		return nil
	}
	l.w.armOnce.Do(func() { close(l.w.armed) })
	list, err := l.e.List(ctx)
	if err != nil {
		return nil
	}
	for _, s := range list {
		l.update(s)
	}
	l.confirming = true
	return &Change{}
}

// fullRescan re-arms every watch, re-reads every session with all caches
// dropped (or, after earlyListing, confirms what it read) and, when c is
// not nil, records what changed since the last delivery.
func (l *loop) fullRescan(ctx context.Context, c *Change) {
	l.w.setStats(func(s *Stats) { s.Rescans++ })
	l.e.SetWatched(false)
	if !l.confirming {
		l.e.InvalidateAll()
	}
	l.confirming = false
	l.unwatched = 0
	l.rescanFailed = false
	defer l.updateTrust()
	// A state dir that is another directory now (moved aside and
	// recreated, a symlink retargeted): every session watch is on the old
	// one, so none may count as watched.
	if id, ok := dirIdentity(l.dir); ok && id != l.dirID {
		if l.dirID != (identity{}) && l.fsw != nil {
			for sid := range l.watched {
				l.fsw.Remove(filepath.Join(l.dir, sid))
			}
			clear(l.watched)
		}
		l.dirID = id
	}
	l.armStateDir()
	// Reopened on every rescan: the state dir may have been replaced.
	l.ds.close()
	l.ds = closedDirStat
	if l.dirOn && l.w.mode == ModePoll {
		l.ds = openDirStat(l.dir)
	}
	t0 := time.Now()
	if l.dirOn {
		ents, err := os.ReadDir(l.dir)
		if err != nil {
			l.w.log.Warn("reading the state directory failed", "dir", l.dir, "err", err)
			l.rescanFailed = true
		}
		seen := map[string]bool{}
		for _, de := range ents {
			if !de.IsDir() || !isSessionName(de.Name()) {
				continue
			}
			id := de.Name()
			seen[id] = true
			if l.w.mode == ModeNotify {
				l.watchSession(id)
			} else {
				l.stampMtime(id)
			}
		}
		l.mtimes.keep(seen)
	}
	// Every session dir seen is watched now: scans from here on read
	// watched directories (see updateTrust).
	l.armed = l.e.Mark()
	l.w.log.Debug("session directories watched", "dirs", len(l.watched), "ms", float64(time.Since(t0).Microseconds())/1000)
	// A listing begun from here on shares the one below (the engine runs
	// one scan for callers of the same epoch), whichever begins first.
	l.w.armOnce.Do(func() { close(l.w.armed) })
	list, err := l.e.List(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		l.w.log.Warn("full rescan failed; retrying", "err", err, "in", rescanRetry)
		l.rescanFailed = true
		l.retryFull = true
		l.armRetry()
		return
	}
	listed := make(map[string]bool, len(list))
	for _, s := range list {
		listed[s.ID] = true
		if l.w.mode == ModeNotify && !l.watched[s.ID] {
			// A session that appeared after the state dir was read: it was
			// listed before its watch existed, so it is read again.
			l.watchSession(s.ID)
			l.e.InvalidateSession(s.ID)
		}
		if l.w.mode == ModePoll {
			if !l.mtimes.has(s.ID) {
				l.stampMtime(s.ID)
			}
		}
		if l.update(s) && c != nil {
			c.Changed = append(c.Changed, s)
		}
	}
	for id := range l.last {
		if !listed[id] {
			if c != nil {
				c.Removed = append(c.Removed, id)
			}
			l.forget(id)
		}
	}
	for id := range l.watched {
		if !listed[id] {
			l.unwatchSession(id)
		}
	}
}

// armStateDir watches the state dir, or while it does not exist its nearest
// existing ancestor, and sets l.dirOn.
func (l *loop) armStateDir() {
	if l.statePolled() {
		if l.fsw != nil {
			// Nothing of fsnotify's may remain on the state dir or an
			// ancestor: on kqueue that is a descriptor per entry.
			if l.dirOn {
				l.fsw.Remove(l.dir)
			}
			if l.anchor != "" {
				l.fsw.Remove(l.anchor)
				l.anchor = ""
			}
		}
		mt, ok := dirMtime(l.dir)
		l.dirOn, l.dirMt = ok, mt
		return
	}
	for range 4 { // the tree may change under us; a few tries settle it
		if l.present() {
			// Add is idempotent for the same directory and re-arms a
			// directory that was removed and created again.
			if err := l.fsw.Add(l.dir); err == nil {
				if l.anchor != "" {
					l.fsw.Remove(l.anchor)
					l.anchor = ""
				}
				if !l.dirOn {
					l.w.log.Info("watching the state directory", "dir", l.dir, "mode", l.w.mode)
				}
				l.dirOn = true
				return
			} else if outOfWatches(err) {
				l.dropNotify(err)
				l.armStateDir()
				return
			} else if !errors.Is(err, os.ErrNotExist) {
				l.w.log.Warn("cannot watch the state directory", "dir", l.dir, "err", err)
			}
		}
		if l.dirOn {
			l.fsw.Remove(l.dir)
			l.dirOn = false
			for id := range l.watched {
				l.unwatchSession(id)
			}
		}
		anc := nearestAncestor(l.dir)
		if anc == l.anchor {
			return
		}
		if l.anchor != "" {
			l.fsw.Remove(l.anchor)
			l.anchor = ""
		}
		if anc == "" {
			return
		}
		err := l.fsw.Add(anc)
		if outOfWatches(err) {
			l.dropNotify(err)
			l.armStateDir()
			return
		}
		if err == nil {
			l.anchor = anc
			l.w.log.Info("state directory does not exist yet; watching its nearest ancestor", "dir", l.dir, "ancestor", anc)
			if !l.present() {
				return
			}
			// It appeared between the check and the watch: go round again.
		}
	}
}

// pathToward is the child of ancestor on the way down to dir.
func pathToward(ancestor, dir string) string {
	for {
		parent := filepath.Dir(dir)
		if parent == ancestor || parent == dir {
			return dir
		}
		dir = parent
	}
}

// nearestAncestor is the closest existing directory above dir, or "".
func nearestAncestor(dir string) string {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

func (l *loop) stampMtime(id string) {
	name := newStatName(id)
	ns, ok := l.ds.mtime(name)
	if !ok {
		return
	}
	l.mtimes.set(id, name, mtime{ns: ns, recheck: time.Now().UnixNano()-ns < int64(recentMtime)})
}

// watchSession adds an fsnotify watch on a session directory. Running out of
// inotify watches (ENOSPC) or descriptors (EMFILE) switches to poll mode.
func (l *loop) watchSession(id string) {
	if l.fsw == nil || l.watched[id] {
		return
	}
	// Checked just before the watch is added, not trusted from the state
	// dir's listing: a name swapped for a symlink meanwhile would put the
	// watch on another directory (inotify follows links), perhaps one
	// already watched under its own name.
	path := filepath.Join(l.dir, id)
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		return // gone, or a symlink the engine does not follow either
	}
	add := l.fsw.Add
	if l.w.testHookAdd != nil {
		add = l.w.testHookAdd
	}
	err := add(path)
	switch {
	case err == nil:
		l.watched[id] = true
	case outOfWatches(err):
		if l.w.mode == ModeNotify {
			l.w.log.Warn("out of file watches; falling back to poll mode (raise fs.inotify.max_user_watches to avoid this)",
				"err", err, "watched", len(l.watched))
			l.degrade("the watch limit was reached (" + err.Error() + "); polling directory mtimes instead")
		}
	case errors.Is(err, os.ErrNotExist):
	default:
		l.w.log.Warn("cannot watch a session directory", "dir", path, "err", err)
		l.unwatched++
		l.updateTrust()
	}
}

// outOfWatches reports whether err means the kernel will give no more
// watches: inotify's max_user_watches (ENOSPC), or descriptors (EMFILE).
func outOfWatches(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE)
}

// dropNotify gives up fsnotify entirely (it cannot even watch the state
// dir): everything, the state dir included, is polled from now on.
func (l *loop) dropNotify(err error) {
	l.w.log.Warn("out of file watches even for the state directory; polling everything", "err", err)
	l.fsw.Close()
	l.fsw = nil
	l.anchor = ""
	clear(l.watched)
	l.degrade("no file watch could be added (" + err.Error() + "); polling directory mtimes instead")
}

// degrade switches to poll mode: only the state dir and locked sessions stay
// watched, the rest is found by mtime after a full rescan.
func (l *loop) degrade(note string) {
	l.note = note
	if l.w.mode == ModePoll {
		return
	}
	l.w.mode = ModePoll
	l.updateTrust()
	for id := range l.watched {
		if !hasHolders(l.last[id]) {
			l.unwatchSession(id)
		}
	}
	l.rescan = true
}

func (l *loop) unwatchSession(id string) {
	if !l.watched[id] {
		return
	}
	delete(l.watched, id)
	if l.fsw != nil {
		// The kernel drops the watch of a removed directory by itself;
		// the error for that case means nothing.
		l.fsw.Remove(filepath.Join(l.dir, id))
	}
}

func hasHolders(s sessionlocks.Session) bool { return len(s.Holders) > 0 }

// update records s as delivered, re-targets the watches that depend on it and
// reports whether it differs from what was delivered before.
func (l *loop) update(s sessionlocks.Session) bool {
	prev, ok := l.last[s.ID]
	l.last[s.ID] = s
	l.track(s)
	if l.w.mode == ModePoll {
		want := hasHolders(s)
		switch {
		case want && !l.watched[s.ID] && len(l.watched) < maxPollWatches:
			l.watchSession(s.ID)
		case !want && l.watched[s.ID]:
			l.unwatchSession(s.ID)
		}
	}
	return !ok || !sameSession(prev, s)
}

// forget drops everything known about a session that is gone.
func (l *loop) forget(id string) {
	delete(l.last, id)
	l.mtimes.del(id)
	delete(l.settle, id)
	l.unwatchSession(id)
	l.untrack(id, nil)
}

// track watches the processes of s's live and unknown holders for exit and
// schedules a re-probe for when its starting holders leave the settle window.
func (l *loop) track(s sessionlocks.Session) {
	var pids []int
	var due time.Time
	for _, h := range s.Holders {
		if h.Reason == sessionlocks.ReasonStarting {
			t := h.LockWrittenAt.Add(l.e.Settle() + settleMargin)
			if t.After(due) {
				due = t
			}
		}
		if h.Verdict == sessionlocks.Stale || slices.Contains(pids, h.PID) {
			continue
		}
		// A holder whose process could not be examined has no start time
		// and is polled (watchProc); one that can be is awaited.
		var start time.Time
		if h.Process != nil {
			start = h.Process.StartedAt
		}
		pids = append(pids, h.PID)
		p := l.procs[h.PID]
		if p != nil && !sameStart(p.start, start) {
			l.dropProc(h.PID)
			p = nil
		}
		if p == nil {
			p = l.watchProc(h.PID, start, s.ID)
		}
		p.sessions[s.ID] = true
	}
	l.untrack(s.ID, pids)
	l.sessPIDs[s.ID] = pids
	if due.IsZero() {
		delete(l.settle, s.ID)
		return
	}
	if now := time.Now(); due.Before(now) {
		// Still starting past its window (a lock stamped in the future,
		// or another clock): look again in a while, not in a tight loop.
		due = now.Add(exitPollInterval)
	}
	l.settle[s.ID] = due
}

// untrack detaches session id from the processes it no longer references.
func (l *loop) untrack(id string, keep []int) {
	for _, pid := range l.sessPIDs[id] {
		if slices.Contains(keep, pid) {
			continue
		}
		if p := l.procs[pid]; p != nil {
			delete(p.sessions, id)
			if len(p.sessions) == 0 {
				l.dropProc(pid)
			}
		}
	}
	if keep == nil {
		delete(l.sessPIDs, id)
	}
}

func (l *loop) dropProc(pid int) {
	if p := l.procs[pid]; p != nil && !p.polled && !p.exited {
		l.ex.remove(pid)
	}
	delete(l.procs, pid)
}

// watchProc starts watching pid, which the engine saw started at start.
func (l *loop) watchProc(pid int, start time.Time, id string) *proc {
	p := &proc{start: start, sessions: map[string]bool{}}
	l.procs[pid] = p
	if start.IsZero() {
		// Without a start time a handle cannot be tied to the process the
		// lock named.
		p.polled = true
		return p
	}
	switch err := l.ex.add(pid, start); {
	case err == nil:
	case errors.Is(err, errExited):
		// Gone (or replaced) between the probe and the handle: re-probe now,
		// and poll rather than await if the engine still calls it alive.
		p.exited, p.polled = true, true
		l.e.InvalidatePID(pid)
		l.markDirty(id, false)
	default:
		if !errors.Is(err, errUnsupported) {
			l.w.log.Debug("cannot await a holder's exit; polling it", "pid", pid, "err", err)
		}
		p.polled = true
	}
	return p
}
