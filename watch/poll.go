package watch

// Poll mode: finding changed session directories, and new ones in the state
// dir, by their modification times instead of file events.

import (
	"os"
	"time"
)

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

func (l *loop) stampMtime(id string) {
	name := newStatName(id)
	ns, ok := l.ds.mtime(name)
	if !ok {
		return
	}
	l.mtimes.set(id, name, mtime{ns: ns, recheck: time.Now().UnixNano()-ns < int64(recentMtime)})
}
