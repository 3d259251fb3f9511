package sessionlocks

// The verdict rules as one pure function: decide reads the facts gathered
// about one holder (judge.go) and names the verdict and the rule behind it,
// with no I/O. docs/judging.md lists the same rules in the same order, and
// rules_test.go holds decide to that table row by row.

import "time"

// facts is everything the rules look at for one holder.
type facts struct {
	pid     int
	lock    fileID // the .lock; zero for an orphan .hold
	hold    fileID // the .hold, a regular file; zero when there is none
	statErr error  // the lock files could not be lstat'ed
	written time.Time
	age     time.Duration // now - written

	settle   time.Duration
	tol      time.Duration // how far clocks may disagree: the granularity, widened by a clock step seen
	cliTol   time.Duration // the same for a process that looks like the CLI (>= tol); 0 when not asked
	boot     time.Time     // zero when unknown
	opLocked bool          // the session's operation lock is held: no CLI is opening it

	proc procInfo
	cli  bool // proc is recognisably the Copilot CLI

	holdSeen  bool       // the named process holds the .hold's exclusive flock through its own descriptor
	holdTable bool       // the machine's lock table shows the .hold's exclusive flock held (by anyone)
	probe     *holdProbe // the .hold probed; nil when it was not (too young, none)

	sharedFS string  // the state dir's file system, when other machines may write it
	nestedNS bool    // this process runs in a PID namespace of its own
	otherOS  string  // the session was written on another system (a VM or WSL sharing the dir)
	unsure   bool    // nothing says yet which system wrote the session (a macOS or Windows host)
	ns       *nsProc // a process in another PID namespace whose pid there is the lock's
}

// untrusted says the lock's time is no evidence: dated in the future
// beyond the tolerance, or before any Copilot CLI existed.
func (f *facts) untrusted() bool { return f.age < -f.tol || f.written.Before(cliEpoch) }

// young says the lock is within the settle window: a CLI may be opening.
func (f *facts) young() bool { return !f.untrusted() && f.age < f.settle }

func (f *facts) alive() bool { return f.proc.state == procAlive && !f.proc.start.IsZero() }

// writerTol is how much later than its lock the named process may have
// started and still be its writer.
func (f *facts) writerTol() time.Duration {
	if f.cli && f.proc.start.After(f.written.Add(f.tol)) {
		return max(f.tol, f.cliTol)
	}
	return f.tol
}

// writer says the named process may be the lock's writer: alive and not
// younger than the lock beyond writerTol.
func (f *facts) writer() bool {
	return f.alive() && (f.untrusted() || !f.proc.start.After(f.written.Add(f.writerTol())))
}

// strictWriter says the named process provably started before the lock:
// only that overrules a .hold the kernel says nobody holds.
func (f *facts) strictWriter() bool {
	return f.alive() && (f.untrusted() || !f.proc.start.After(f.written.Add(f.tol)))
}

// gone says no process has the pid here: none, a zombie, or a thread's id.
func (f *facts) gone() bool {
	s := f.proc.state
	return s == procGone || s == procZombie || s == procThread
}

// pidsProveNothing says a pid here says nothing about the lock's writer:
// a shared file system, a sandbox, another system's session, or a young
// lock whose session does not say yet where it was written.
func (f *facts) pidsProveNothing() bool {
	return f.sharedFS != "" || f.nestedNS || f.otherOS != "" || f.unsure && f.young()
}

// pidStale is the pid-based stale reason the facts support, before asking
// whether pids prove anything from here: "" when none does.
func (f *facts) pidStale() Reason {
	if !f.untrusted() && !f.boot.IsZero() && f.written.Before(f.boot.Add(-f.tol)) && !(f.cli && f.writer()) {
		return ReasonPredatesBoot
	}
	if f.gone() {
		return ReasonProcessExited
	}
	if f.proc.state == procAlive && !f.untrusted() && !f.proc.start.IsZero() && f.proc.start.After(f.written.Add(f.writerTol())) {
		return ReasonPIDReused
	}
	return ""
}

// decide applies the rules, in order. It may err toward "live", never
// toward "stale". See docs/judging.md.
func decide(f *facts) (Verdict, Reason) {
	if f.statErr != nil || f.lock.exists() && !isRegular(f.lock) {
		return Unknown, ReasonUnprobeable // unseen, or a link, FIFO or directory named like a lock: never opened
	}
	// Rule 1: the kernel lock on the .hold, the strongest evidence there is.
	if f.holdSeen || f.holdTable {
		return Live, ReasonHoldLocked
	}
	if p := f.probe; p != nil {
		switch {
		case p.changed:
			return Live, ReasonStarting // re-created while examined: a CLI is opening the session
		case p.err == nil && p.held:
			return Live, ReasonHoldLocked
		case p.err == nil && !f.strictWriter():
			if f.sharedFS != "" || f.otherOS != "" || f.unsure && f.young() {
				return Unknown, ReasonUnprobeable // a CLI of another kernel may hold a lock this one never sees
			}
			return Stale, ReasonHoldReleased
		}
		// Not probed, or free while the lock's writer still runs: the pid decides.
	} else if f.hold.exists() && f.young() && !(f.gone() && !f.pidsProveNothing() && f.ns == nil) {
		// Too young to probe: a CLI may be between its .lock and its flock.
		// Only a pid that no process has, anywhere this process can see,
		// says otherwise.
		return Live, ReasonStarting
	}
	// Rules 2-4: what the pid is now.
	if r := f.pidStale(); r != "" {
		switch {
		case f.pidsProveNothing():
			return Unknown, ReasonUnprobeable
		case f.ns != nil && f.ns.cli:
			return Live, ReasonVerified
		case f.ns != nil:
			return Unknown, ReasonUnverified
		}
		return Stale, r
	}
	if f.proc.state == procUnknown {
		if f.young() {
			return Live, ReasonStarting // not knowing whether it runs, a young lock is mid-open
		}
		return Unknown, ReasonUnprobeable
	}
	// Rule 5.
	if f.young() {
		return Live, ReasonStarting
	}
	// Rule 6.
	if f.cli && f.writer() {
		return Live, ReasonVerified
	}
	// Rule 7.
	if f.proc.start.IsZero() || f.proc.argv == nil {
		return Unknown, ReasonUnprobeable
	}
	return Unknown, ReasonUnverified
}

// cliEpoch is when the Copilot CLI began writing session locks, give or take.
var cliEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
