package sessionlocks

// Judging a holder: its facts gathered (the I/O), decided (rules.go) and
// told (detail.go); and every holder of a session judged in pid order, a
// huge session's in batches on every core.

import (
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// judgeOpts is what one judgement of a session shares between its holders.
type judgeOpts struct {
	began     time.Time
	decision  bool // a user acts on it: other PID namespaces are looked at afresh
	prove     bool // each live holder's owner is proven
	opLocked  bool // the session's operation lock is held: the .hold may be probed at any age
	countOnly bool // the holder is counted, not listed: no sentence
	sharedFS  string
	nestedNS  bool
	otherOS   string
	unsure    bool // nothing says yet which system wrote the session (writtenOn.unsure)
}

// optsFor is the judgement of one session from where the engine runs.
func (e *Engine) optsFor(s *dirSnapshot, p Platform) judgeOpts {
	o := judgeOpts{began: e.now(), nestedNS: p.NestedPIDNamespace, otherOS: s.otherOS, unsure: s.unsure}
	if o.otherOS == "" && s.seenOS != runtime.GOOS && (s.metaErr && s.meta.CWD == "" || s.unread) {
		// What would say that another system wrote it could not be read.
		o.otherOS = "a system it does not say (its workspace.yaml or events.jsonl could not be read)"
	}
	if p.Shared {
		o.sharedFS = p.FileSystem
	}
	return o
}

// gather reads what the rules need to judge r. It never probes a .hold
// younger than the settle window outside the operation lock: a probe's
// flock between a CLI's creating it and locking it makes the CLI fail.
func (e *Engine) gather(r lockRef, o *judgeOpts, f *facts) {
	*f = facts{pid: r.pid, lock: r.lock, hold: r.hold, statErr: r.err, settle: e.settle, opLocked: o.opLocked,
		sharedFS: o.sharedFS, nestedNS: o.nestedNS, otherOS: o.otherOS, unsure: o.unsure}
	f.written = r.lock.modTime()
	if !r.lock.exists() {
		f.written = r.hold.modTime()
	}
	f.age = e.now().Sub(f.written)
	boot, err := bootTime()
	if err == nil {
		f.boot = boot
	}
	f.tol = e.tolerance(boot, err)
	if r.err != nil || r.lock.exists() && !isRegular(r.lock) {
		return
	}
	f.proc = readProc(r.pid)
	f.cli = f.proc.state == procAlive && isCopilot(f.proc.argv, r.pid)
	if f.cli && !f.untrusted() && f.proc.start.After(f.written.Add(f.tol)) {
		f.cliTol = e.cliTolerance()
	}
	if r.hold.exists() {
		if !f.young() || o.opLocked {
			p := probeHold(r.holdPath(), r.hold)
			f.probe = &p
		} else if f.proc.state == procAlive && holdsFile(r.pid, holdFileName(r.pid), r.hold, true) {
			f.holdSeen = true
			return
		} else if f.gone() && lockTableHolds(r.hold) {
			f.holdTable = true // a CLI this process cannot see holds it
			return
		}
	}
	if !f.pidsProveNothing() && (f.pidStale() != "" || f.hold.exists() && f.probe == nil && f.gone()) {
		// A listing trusts no account of other PID namespaces older than
		// the lock; a decision none older than itself.
		notBefore := f.written
		if o.decision {
			notBefore = o.began
		}
		f.ns = e.inOtherNamespace(r.pid, f.written, notBefore, f.tol)
	}
}

// judge gathers r's facts and decides; a live holder's owner is proven in
// a decision.
func (e *Engine) judge(r lockRef, o judgeOpts) Holder {
	var facts facts
	f := &facts
	e.gather(r, &o, f)
	v, why := decide(f)
	h := Holder{SessionID: r.sessionID, PID: r.pid, Verdict: v, Reason: why, LockWrittenAt: f.written,
		ProbedAt: e.now(), LockFile: r.lockPath(), lockID: r.lock, holdID: r.hold}
	if r.hold.exists() {
		h.HoldFile = r.holdPath()
	}
	if p := f.probe; p != nil && p.err == nil && !p.held && !p.changed {
		h.holdFree, h.holdID = true, p.id
	}
	if !o.countOnly {
		h.Detail, h.Process = detail(f, v, why), processOf(f.proc)
	}
	if why == ReasonStarting && f.young() {
		h.RecheckAt = f.written.Add(e.settle)
	}
	if v == Live {
		e.attach(&h, f.proc)
		if o.prove {
			h.Owner, h.NoOwner = e.prove(r, &o)
		}
	}
	return h
}

// holderCap bounds the holders a session lists; the rest are counted
// (Session.HoldersOmitted).
const holderCap = 1000

// appendCapped appends v to *list unless it holds holderCap already, and
// reports whether it did.
func appendCapped[T any](list *[]T, v T) bool {
	if len(*list) >= holderCap {
		return false
	}
	*list = append(*list, v)
	return true
}

// judgeBatch is how many holders of a large session are judged at a time.
const judgeBatch = 4096

// walk judges every holder of snapshot s in pid order and visits each
// until visit returns false; those past the first holderCap are counted,
// not listed. With cached, listed verdicts come from and go to the probe
// cache. A large session is judged in batches on every core: 100,000 dead
// locks never exist as 100,000 holders at once.
func (e *Engine) walk(id string, s *dirSnapshot, o judgeOpts, cached bool, visit func(Holder) bool) {
	if len(s.files) == 0 {
		return // most sessions: no directory to open
	}
	dir := filepath.Join(e.dir, id)
	st := openDirStat(dir)
	defer st.close()
	starts := holderStarts(s.files)
	gen := e.caches.generation()
	one := func(k int, listed bool) (Holder, bool) {
		r, ok := refAt(id, dir, s.files, starts[k], st)
		if !ok {
			return Holder{}, false // gone since the read
		}
		ho := o
		ho.countOnly = !listed
		key := probeKey{session: id, pid: r.pid, lock: r.lock, hold: r.hold}
		if cached && !ho.countOnly {
			if h, ok := e.caches.verdict(key); ok {
				return h, true
			}
		}
		h := e.judge(r, ho)
		if !ho.countOnly {
			// A decision's verdict serves the next listing too, without the owner.
			kept := h
			kept.Owner, kept.NoOwner = nil, ""
			e.caches.keepVerdict(key, kept, gen)
		}
		return h, true
	}
	visited := 0
	batch := make([]Holder, min(len(starts), judgeBatch))
	found := make([]bool, len(batch))
	for first := 0; first < len(starts); first += len(batch) {
		n := min(len(batch), len(starts)-first)
		workers := min(runtime.GOMAXPROCS(0), (n+255)/256)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for k := w; k < n; k += workers {
					batch[k], found[k] = one(first+k, first+k < holderCap)
				}
			})
		}
		wg.Wait()
		for k := range n {
			if !found[k] {
				continue
			}
			if visited < holderCap && first+k >= holderCap {
				// Listed after all, holders before it having gone.
				if batch[k], found[k] = one(first+k, true); !found[k] {
					continue
				}
			}
			if visited++; !visit(batch[k]) {
				return
			}
		}
	}
}

// tally derives a session's state and conflict from its holders' verdicts.
type tally struct{ live, unknown, all int }

func (n *tally) add(v Verdict) {
	n.all++
	switch v {
	case Live:
		n.live++
	case Unknown:
		n.unknown++
	}
}

func (n tally) apply(s *Session) {
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

func processOf(p procInfo) *Process {
	if p.state != procAlive && p.state != procZombie {
		return nil
	}
	return &Process{StartedAt: p.start, Command: strings.Join(p.argv, " "), Argv: p.argv, UID: p.uid}
}
