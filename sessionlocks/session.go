package sessionlocks

// Reading and judging one session: its directory (from the snapshot cache
// or afresh), its metadata, and every holder, a huge session's in batches.

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sync"
)

// Session reads one session with every holder probed afresh (never from the
// cache), as a decision such as canResume needs.
func (e *Engine) Judge(ctx context.Context, id string) (Session, error) {
	if err := ValidateID(id); err != nil {
		return Session{}, err
	}
	s, err := e.scanSession(id, false)
	if err == nil && s == nil {
		err = &NotFoundError{ID: id, Dir: e.dir}
	}
	if err != nil {
		return Session{}, err
	}
	return *s, nil
}

// scanSession reads one session directory and judges its holders. It
// returns nil, nil when there is no such session directory. With cached
// false, nothing is taken from a cache (results are still stored).
func (e *Engine) scanSession(id string, cached bool) (*Session, error) {
	return e.scanSessionOp(id, cached, false)
}

// scanLocked is scanSession for a caller holding the session's operation
// lock: nothing cached, and .hold files probed whatever their age.
func (e *Engine) scanLocked(id string) (*Session, error) { return e.scanSessionOp(id, false, true) }

func (e *Engine) scanSessionOp(id string, cached, opLocked bool) (*Session, error) {
	return e.judgeSession(id, cached, opLocked, nil)
}

// judgeSession reads one session and judges every holder, calling visit
// (if not nil) with each, and sets its Token from every live and unknown
// holder, listed or not: what a decision rests on.
func (e *Engine) judgeSession(id string, cached, opLocked bool, visit func(Holder)) (*Session, error) {
	var s Session
	var nonStale []string
	sg := e.decisionSight(true)
	sg.brief = true // a judgement's unlisted holders only count, and name the live ones in the token
	ok, err := e.scanVisit(&s, id, cached, opLocked, nil, sg, func(h Holder) bool {
		if h.Verdict != Stale {
			nonStale = append(nonStale, holderEntry(id, h))
		}
		if visit != nil {
			visit(h)
		}
		return true
	})
	if !ok || err != nil {
		return nil, err
	}
	s.decided = &decided{token: tokenOf(nonStale), nonStale: nonStale}
	return &s, nil
}

// scanInto is scanSession writing into s; ok is false when there is no
// such session directory.
func (e *Engine) scanInto(s *Session, id string, cached, opLocked bool, r *dirReader, sg *sight) (ok bool, err error) {
	return e.scanVisit(s, id, cached, opLocked, r, sg, nil)
}

// scanVisit is scanInto calling visit with every holder it judges, listed
// or not (see maxListedHolders), in pid order: how a mutation walks a
// session of 100,000 holders without holding them all. visit returns false
// to stop there; s then describes only the holders judged so far.
func (e *Engine) scanVisit(s *Session, id string, cached, opLocked bool, r *dirReader, sg *sight, visit func(Holder) bool) (ok bool, err error) {
	epoch := e.epoch.Load()
	watched := cached && e.watched.Load()
	var refs []lockRef // the holders to judge: snap.refs, or a huge session's made afresh

	// snap is read-only once stored: the watched path uses the stored
	// snapshot itself rather than a copy (a listing of 10,000 copies spent
	// its time in memmove).
	var snap *dirSnapshot
	if watched {
		snap = e.dirs.peekPtr(id)
		ok = snap != nil
	}
	if !ok {
		if r == nil {
			r = newDirReader(e.dir)
			defer r.close()
		}
		now := e.now()
		dir := e.dir + string(os.PathSeparator) + id
		var old *dirSnapshot
		var sd sessionDir
		read := false
		last := e.dirs.peekPtr(id)
		if cached && last != nil {
			dirID, err := r.stat(dir, id)
			if err != nil {
				return e.sessionDirErr(dir, err)
			}
			if dirID.mode != uint32(fs.ModeDir) { // a symlinked session directory is never followed
				return false, nil
			}
			old = e.dirs.valid(id, dirID)
		}
		if old == nil {
			// Nothing to validate: open and list the directory at once, its
			// identity taken from the open descriptor (no separate lstat).
			if sd, err = r.read(dir, id); err != nil {
				return e.sessionDirErr(dir, err)
			}
			read = true
		}
		// A snapshot read before the watcher's last Mark and confirmed by a
		// scan after it is stored again, stamped with this scan's epoch:
		// the stats here came after every watch was in place, so TrustSince
		// keeps it (the watcher lists once before it adds its watches).
		// Confirming it takes workspace.yaml's stat too: rewritten in place,
		// it leaves the directory's mtime alone, and a trusted snapshot is
		// not looked at again until its directory changes.
		marked := e.marked.Load()
		restamp := old != nil && old.epoch < marked && epoch >= marked
		metaDue := old != nil && (restamp || now.Sub(old.metaAt) >= e.cache.ttl)
		if old != nil && !old.huge {
			// The holders' files are stat'ed afresh: their identity is part
			// of the probe cache's key and what a removal checks against.
			// (A huge session's are stat'ed as they are judged.)
			refs = e.lockRefs(id, dir, old.files)
		}
		if old != nil && !metaDue && slices.Equal(refs, old.refs) {
			snap = old // nothing changed: no copy, no store
		} else {
			var fresh dirSnapshot
			if !read {
				fresh = *old
				if metaDue {
					// Metadata is not evidence about locks, but it should not
					// go stale for long: workspace.yaml may be rewritten in
					// place, which leaves the directory's mtime alone.
					e.refreshMeta(dir, &fresh, now)
				}
				fresh.refs = refs
			} else {
				prev := metadata{}
				if last != nil {
					prev = last.meta
				} else {
					prev = e.dirs.droppedMeta(id)
				}
				fresh = e.snapshotOf(dir, sd, now, prev)
				if !fresh.huge {
					fresh.refs = e.lockRefs(id, dir, fresh.files)
				}
			}
			refs = fresh.refs
			fresh.epoch = epoch
			snap = &fresh
			e.dirs.store(id, snap, epoch, &e.epoch)
		}
	}
	if refs == nil {
		refs = snap.refs
	}

	*s = Session{ID: id, Dir: snap.path}
	m := snap.meta
	s.Name, s.CWD, s.Repository, s.Branch, s.ClientName = m.Name, m.CWD, m.Repository, m.Branch, m.ClientName
	s.CreatedAt, s.UpdatedAt = m.created, m.updated
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = snap.dir.modTime()
		if m := snap.metaID.modTime(); snap.metaID.exists() && m.After(s.UpdatedAt) {
			s.UpdatedAt = m
		}
	}
	if s.Repository == "" && m.GitRoot != "" {
		s.Repository = m.GitRoot
	}

	// A session lists at most maxListedHolders holders and counts the
	// rest; every one is judged, for the state. A huge session's verdicts
	// are not cached (its listing would hold them all), and its holders
	// are made, stat'ed and judged in batches on every core, then visited
	// in order: 100,000 dead locks never exist as 100,000 holders at once.
	var n holderCounts
	take := func(h Holder) bool {
		n.add(h.Verdict)
		if len(s.Holders) < maxListedHolders {
			s.Holders = append(s.Holders, h)
		} else {
			s.HoldersOmitted++
		}
		return visit == nil || visit(h)
	}
	if snap.huge {
		e.judgeHuge(snap, id, opLocked, sg, take, maxListedHolders)
		n.summarise(s)
		return true, nil
	}
	for _, r := range refs {
		k := r.key()
		h, got := Holder{}, false
		if cached {
			h, got = e.cache.get(k)
		}
		if !got {
			h = e.judge(r, e.now(), opLocked, sg)
			e.cache.put(k, h, epoch, &e.epoch)
		}
		if !take(h) {
			break
		}
	}
	n.summarise(s)
	return true, nil
}

// judgeBatch is how many holders of a huge session are judged at a time.
const judgeBatch = 4096

// judgeHuge judges the holders of a huge session snap, judgeBatch at a
// time on every core, and visits them in pid order until visit returns
// false. Holders from the listed-th on are judged briefly if sg allows
// (see judgeHolder); those whose files have gone are skipped.
func (e *Engine) judgeHuge(snap *dirSnapshot, id string, opLocked bool, sg *sight, visit func(Holder) bool, listed int) {
	st := openDirStat(snap.path)
	defer st.close()
	files := snap.files
	starts := make([]int, 0, judgeBatch)
	batch := make([]Holder, judgeBatch)
	visited := 0
	for i := 0; i < len(files); {
		starts = starts[:0]
		for ; i < len(files) && len(starts) < judgeBatch; i = nextHolder(files, i) {
			starts = append(starts, i)
		}
		before := visited
		workers := min(runtime.GOMAXPROCS(0), (len(starts)+255)/256)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var buf []byte
				for k := w; k < len(starts); k += workers {
					r, ok := refAt(id, snap.path, files, starts[k], st, &buf)
					if !ok {
						batch[k] = Holder{} // gone since the listing
						continue
					}
					batch[k] = e.judgeHolder(r, e.now(), opLocked, sg, sg.brief && before+k >= listed)
				}
			}()
		}
		wg.Wait()
		for k := range starts {
			h := batch[k]
			if h.Verdict == "" {
				continue
			}
			if visited < listed && sg.brief && before+k >= listed {
				// Listed after all, holders before it having gone: judged
				// again in full, with its sentence and paths.
				var buf []byte
				r, ok := refAt(id, snap.path, files, starts[k], st, &buf)
				if !ok {
					continue
				}
				h = e.judge(r.withKeyPath(), e.now(), opLocked, sg)
			}
			if visited++; !visit(h) {
				return
			}
		}
	}
}

// maxListedHolders bounds the holders a session lists; the rest are
// counted (Session.HoldersOmitted). A real session has one or two; a
// directory of years of crashes, or a hostile one, may have 100,000.
const maxListedHolders = 1000

// holderCounts counts verdicts, for a session's state.
type holderCounts struct{ live, unknown, all int }

func (n *holderCounts) add(v Verdict) {
	n.all++
	switch v {
	case Live:
		n.live++
	case Unknown:
		n.unknown++
	}
}

// summarise derives a session's state from its holders' verdicts: inUse if
// any is live, else unknown if any is unknown, else stale if there are
// holders, else free; conflict when two or more are live.
func (n holderCounts) summarise(s *Session) {
	switch {
	case n.live > 0:
		s.State = StateInUse
	case n.unknown > 0:
		s.State = StateUnknown
	case n.all > 0:
		s.State = StateStale
	default:
		s.State = StateFree
	}
	s.Conflict = n.live > 1
}

// sessionDirErr turns an error reading the session directory dir into
// scanInto's answer. The state dir is blamed when it is the state dir that
// is wrong (not a directory, unreadable), so that callers get one error for
// it; a session that vanished or is not a directory is no session.
func (e *Engine) sessionDirErr(dir string, err error) (bool, error) {
	if fi, serr := os.Stat(e.dir); serr != nil && !errors.Is(serr, fs.ErrNotExist) {
		return false, &StateDirError{Path: e.dir, Err: serr}
	} else if serr == nil && !fi.IsDir() {
		return false, &StateDirError{Path: e.dir, Err: errors.New("not a directory")}
	}
	if errors.Is(err, errNotDir) || errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, fileErr(err)
}
