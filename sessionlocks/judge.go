package sessionlocks

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"
)

// lockRef is one holder as the directory scan found it, before judgement.
type lockRef struct {
	sessionID string
	dir       string
	pid       int
	lock      fileID // zero if there is no .lock (an orphan .hold)
	hold      fileID // zero if there is no .hold
	// keyPath is the probe cache's path: the .lock's, or the .hold's for an
	// orphan hold. Made once with the ref, which a watched listing reuses,
	// instead of joined afresh for every lookup.
	keyPath string
}

func (r lockRef) lockPath() string { return filepath.Join(r.dir, lockFileName(r.pid)) }
func (r lockRef) holdPath() string { return filepath.Join(r.dir, holdFileName(r.pid)) }

// withKeyPath sets keyPath from the files the ref names.
func (r lockRef) withKeyPath() lockRef {
	if r.lock.exists() {
		r.keyPath = r.lockPath()
	} else {
		r.keyPath = r.holdPath()
	}
	return r
}

func (r lockRef) key() probeKey {
	if r.keyPath == "" {
		r = r.withKeyPath()
	}
	k := probeKey{path: r.keyPath, lock: r.lock, pid: r.pid, hold: r.hold}
	return k
}

// judge applies the verdict rules to one holder. It answers one question,
// whether the session is held, and may err toward "live", never toward
// "stale". Which process holds it is another question (see prove), asked
// only of live holders. The rules, in order:
//
//  1. .hold present: if the kernel's lock table shows an exclusive flock on
//     it (Linux, any age: reading the table never disturbs a CLI taking its
//     flock), live (hold-locked). Else, once the lock is older than the
//     settle window, probe it: held, live (hold-locked); free, stale
//     (hold-released), unless the named process is provably the lock's
//     writer and still alive (then rules 6-7 decide: a live writer is never
//     called stale). Before the window ends: live (starting).
//  2. lock written before the machine booted: stale (predates-boot).
//  3. no such process, a zombie, or a thread: stale (process-exited).
//  4. process started after the lock was written: stale (pid-reused).
//  5. lock younger than the settle window, process alive: live (starting).
//  6. process older than the lock and its argv is the Copilot CLI: live (verified).
//  7. otherwise unknown: unverified, or unprobeable when facts are missing.
//
// A stale verdict of rules 1-4 stands only where this process can see what
// it needs to: the pid-based ones (2-4) not from a PID namespace of its own
// and none on a file system other machines share (then unknown); the
// pid-based ones not while a Copilot CLI in another PID namespace has the
// lock's pid there (then live, verified).
//
// opLocked says the caller holds the session's operation lock, under which no
// CLI can be opening the session: the .hold may then be probed at any age.
func (e *Engine) judge(r lockRef, now time.Time, opLocked bool, sg *sight) Holder {
	return e.judgeHolder(r, now, opLocked, sg, false)
}

// judgeHolder is judge; brief leaves out what only a listed holder shows
// (its detail sentence, its files' paths): a session of 100,000 dead locks
// lists 1,000, and the rest only count.
func (e *Engine) judgeHolder(r lockRef, now time.Time, opLocked bool, sg *sight, brief bool) Holder {
	h := Holder{
		SessionID: r.sessionID,
		PID:       r.pid,
		ProbedAt:  now,
		lockID:    r.lock,
		holdID:    r.hold,
	}
	if brief && r.lock.exists() && isRegular(r.lock) && !r.hold.exists() {
		// What a directory of 100,000 dead locks is made of: judged by the
		// same rules, without a sentence nobody will read.
		if v, why, ok := e.judgeDeadBriefly(r, sg); ok {
			h.Verdict, h.Reason, h.LockWrittenAt = v, why, r.lock.modTime()
			return h
		}
	}
	name, holdName := lockFileName(r.pid), holdFileName(r.pid)
	holdPath := filepath.Join(r.dir, holdName)
	if !brief {
		h.LockFile = filepath.Join(r.dir, name)
		if r.hold.exists() {
			h.HoldFile = holdPath
		}
	}
	written := r.lock
	if !r.lock.exists() {
		written = r.hold
	}
	h.LockWrittenAt = written.modTime()
	age := now.Sub(h.LockWrittenAt)

	set := func(v Verdict, why Reason, format string, args ...any) Holder {
		h.Verdict, h.Reason = v, why
		if !brief {
			h.Detail = fmt.Sprintf(format, args...)
		}
		if v == Live && sg.prove {
			h.Owner, h.NoOwner = e.prove(r, sg)
		}
		return h
	}

	if r.lock.exists() && !isRegular(r.lock) {
		return set(Unknown, ReasonUnprobeable, "%s is a %s, not a regular file, so it was not opened; it is left alone.", name, kindOf(r.lock))
	}

	p := readProc(r.pid)
	h.Process = processOf(p)
	boot, bootErr := bootTime()
	tol := e.tolerance(boot, bootErr)
	cli := p.state == procAlive && isCopilot(p.argv, r.pid)
	// A lock dated in the future (beyond the tolerance), or before any
	// Copilot CLI existed, was stamped by a clock that was wrong, or
	// clamped by a file system that cannot store its date (ext4 with small
	// inodes keeps 1901-2038 only): its time is no evidence, it is not
	// young, and nothing is judged by comparing it.
	timeNote := ""
	untrusted := false
	switch {
	case age < -tol:
		untrusted = true
		timeNote = fmt.Sprintf(" (the lock is dated %s, %s in the future: a clock was wrong when it was written)", stamp(h.LockWrittenAt), human(-age))
	case h.LockWrittenAt.Before(cliEpoch):
		untrusted = true
		timeNote = fmt.Sprintf(" (the lock is dated %s, before any Copilot CLI existed: a clock, or a file system that cannot store the date, was wrong)", stamp(h.LockWrittenAt))
	}
	young := !untrusted && age < e.settle
	when := func() string {
		if untrusted {
			return strings.TrimSuffix(strings.TrimPrefix(timeNote, " ("), ")")
		}
		return fmt.Sprintf("the lock was written %s ago", human(age))
	}
	// A process that looks like the CLI is taken for the lock's writer
	// unless it started later than any disagreement of clocks explains.
	writerTol := tol
	if cli && !untrusted && !p.start.IsZero() && p.start.After(h.LockWrittenAt.Add(tol)) {
		writerTol = max(tol, e.cliTolerance())
	}
	alive := p.state == procAlive && !p.start.IsZero()
	writerAlive := alive && (untrusted || !p.start.After(h.LockWrittenAt.Add(writerTol)))
	h.WriterVerified = writerAlive && cli
	// Against a free .hold, only a process that provably started before
	// the lock counts as its writer: the clock allowance above is for
	// deciding between "live" and "pid reused", not for overruling a lock
	// the kernel says nobody holds.
	strictWriter := alive && (untrusted || !p.start.After(h.LockWrittenAt.Add(tol)))
	v := sg.vantage()
	blind := v.blindness()

	// Rule 1: the kernel lock on the .hold is the strongest evidence there
	// is. The lock table is read-only evidence and is read at any age; a
	// probe is made only once the lock is older than the settle window: a
	// CLI creates its .hold about a millisecond after its .lock and flocks
	// it a moment later, and a probe's shared flock landing in between
	// would make the CLI's own exclusive flock fail.
	holdNote := ""
	if r.hold.exists() && isRegular(r.hold) {
		// Its named process holding the exclusive flock through its own
		// descriptor on it: seen at any age without touching the lock.
		if young && !opLocked && p.state == procAlive && holdsFile(r.pid, holdName, r.hold, true) {
			return set(Live, ReasonHoldLocked, "The kernel lock on %s is held by pid %d%s through a descriptor it has open on it, so the session is open.", holdName, r.pid, nameOf(p))
		}
	}
	if r.hold.exists() && (!young || opLocked) {
		hp := probeHold(holdPath, r.hold)
		switch {
		case errors.Is(hp.err, errChanged):
			// Re-created since the scan: a CLI is opening the session now.
			return set(Live, ReasonStarting, "%s was re-created while it was being examined, so a CLI is opening the session.", holdName)
		case hp.err != nil:
			holdNote = fmt.Sprintf(" (the .hold could not be probed: %v)", hp.err)
		case hp.held:
			if !r.lock.exists() {
				return set(Live, ReasonHoldLocked, "The kernel lock on %s is held, so a live process still has the session open, although its inuse.%d.lock is missing.", holdName, r.pid)
			}
			return set(Live, ReasonHoldLocked, "The kernel lock on %s is held, so the session is open%s.", holdName, heldBy(r.pid, p))
		default:
			h.holdFree = true
			h.holdID = hp.id
			if v.Shared && !strictWriter {
				// A CLI on another machine holds its flock where this
				// kernel may never see it (SMB, 9p, sshfs, NFS without
				// lock forwarding).
				return set(Unknown, ReasonUnprobeable, "Nobody on this machine holds the kernel lock on %s, but %s.", holdName, blind)
			}
			if !r.lock.exists() {
				return set(Stale, ReasonHoldReleased, "%s is left over without its .lock and nobody holds its kernel lock.", holdName)
			}
			if !strictWriter {
				if untrusted {
					return set(Stale, ReasonHoldReleased, "Nobody holds the kernel lock on %s any more, so the CLI that wrote the lock has exited%s%s.", holdName, pidNow(r.pid, p), timeNote)
				}
				return set(Stale, ReasonHoldReleased, "Nobody holds the kernel lock on %s any more, so the CLI that wrote the lock %s ago has exited%s.", holdName, human(age), pidNow(r.pid, p))
			}
			holdNote = fmt.Sprintf(" (its %s is not locked, but the process that wrote the lock is still running)", holdName)
		}
	}

	// A young lock with a .hold that was not probed: the CLI that made it
	// may be alive where this process cannot see it (another PID namespace,
	// a container sharing ~/.copilot, another host on a shared home) and
	// only the .hold's kernel lock would tell. Until the settle window has
	// passed and the .hold can be probed safely, the session counts as
	// opening, whatever the pid says.
	if r.hold.exists() && young && !opLocked {
		seen := fmt.Sprintf("pid %d is %s", r.pid, describe(p))
		switch p.state {
		case procGone, procZombie, procThread:
			seen = fmt.Sprintf("pid %d is not running here (a CLI in another container or PID namespace would look the same)", r.pid)
		case procUnknown:
			seen = fmt.Sprintf("pid %d could not be examined", r.pid)
		}
		return set(Live, ReasonStarting, "The lock was written %s ago and its .hold exists; %s. The .hold's kernel lock is examined once the lock is older than the settle window (%s): until then the session counts as opening.", human(age), seen, e.settle)
	}

	// stale returns a pid-based stale verdict where it can stand: not where
	// this process is blind to the CLI the lock may belong to, and not while
	// something positive says the session is held.
	stale := func(why Reason, format string, args ...any) Holder {
		detail := fmt.Sprintf(format, args...)
		if blind != "" {
			return set(Unknown, ReasonUnprobeable, "%s; but %s.", strings.TrimSuffix(detail, "."), blind)
		}
		// A decision trusts no account of other namespaces older than
		// itself; a listing none older than the lock.
		notBefore := h.LockWrittenAt
		if sg.fresh {
			notBefore = sg.began
		}
		if c := e.inOtherNamespace(r.pid, h.LockWrittenAt, notBefore, tol); c != nil {
			if c.cli {
				return set(Live, ReasonVerified, "pid %d is the Copilot CLI in another PID namespace (pid %d here: %s), running since %s, before the lock was written.", r.pid, c.pid, clip(strings.Join(c.argv, " "), 120), stamp(c.start))
			}
			return set(Unknown, ReasonUnverified, "%s; but in another PID namespace pid %d (pid %d here) is %s, alive and older than the lock, which does not look like the Copilot CLI, though it may have written it.", strings.TrimSuffix(detail, "."), r.pid, c.pid, clip(strings.Join(c.argv, " "), 80))
		}
		return set(Stale, why, "%s", detail)
	}

	// Rule 2.
	if !untrusted && bootErr == nil && h.LockWrittenAt.Before(boot.Add(-tol)) && !(cli && writerAlive) {
		return stale(ReasonPredatesBoot, "%s was written at %s, before the machine booted at %s.", name, stamp(h.LockWrittenAt), stamp(boot))
	}

	// Rule 3.
	switch p.state {
	case procGone:
		return stale(ReasonProcessExited, "pid %d is not running; %s.", r.pid, when())
	case procZombie:
		return stale(ReasonProcessExited, "pid %d has exited (a zombie its parent has not reaped yet); %s.", r.pid, when())
	case procThread:
		return stale(ReasonProcessExited, "pid %d is not a process but a thread%s, so no process has it; %s.", r.pid, threadOf(p), when())
	case procUnknown:
		if young {
			// Not knowing whether it runs, a young lock is treated as mid-open:
			// the safe side of an unknown.
			return set(Live, ReasonStarting, "The lock was written %s ago and pid %d could not be examined (%v); a CLI may still be opening the session.", human(age), r.pid, p.err)
		}
		return set(Unknown, ReasonUnprobeable, "pid %d could not be examined: %v.", r.pid, p.err)
	}

	// Rule 4.
	if !untrusted && !p.start.IsZero() && p.start.After(h.LockWrittenAt.Add(writerTol)) {
		if cli {
			return stale(ReasonPIDReused, "pid %d is now %s, started %s after the lock was written (more than the %s allowed for clocks that disagree), so it is not the process that wrote it.", r.pid, describe(p), human(p.start.Sub(h.LockWrittenAt)), human(writerTol))
		}
		return stale(ReasonPIDReused, "pid %d is now %s, started %s after the lock was written, so it is not the process that wrote it.", r.pid, describe(p), human(p.start.Sub(h.LockWrittenAt)))
	}

	// Rule 5.
	if young {
		return set(Live, ReasonStarting, "The lock was written %s ago and pid %d (%s) is alive; a CLI may still be opening the session (settle window %s).", human(age), r.pid, describe(p), e.settle)
	}

	// Rule 6.
	if h.WriterVerified {
		if !untrusted && p.start.After(h.LockWrittenAt.Add(tol)) {
			return set(Live, ReasonVerified, "pid %d is the Copilot CLI (%s), started %s after the lock was written: within the %s allowed for clocks that disagree, so it is taken for the lock's writer%s.", r.pid, clip(strings.Join(p.argv, " "), 120), human(p.start.Sub(h.LockWrittenAt)), human(writerTol), holdNote)
		}
		if untrusted {
			return set(Live, ReasonVerified, "pid %d is the Copilot CLI (%s), running since %s%s%s.", r.pid, clip(strings.Join(p.argv, " "), 120), stamp(p.start), holdNote, timeNote)
		}
		return set(Live, ReasonVerified, "pid %d is the Copilot CLI (%s), running since %s, before the lock was written%s.", r.pid, clip(strings.Join(p.argv, " "), 120), stamp(p.start), holdNote)
	}

	// Rule 7.
	if p.start.IsZero() || p.argv == nil {
		why := "its start time or command line could not be read"
		if p.err != nil {
			why = p.err.Error()
		}
		return set(Unknown, ReasonUnprobeable, "pid %d is alive but could not be examined fully (%s)%s.", r.pid, why, holdNote)
	}
	older := "alive and older than the lock"
	if untrusted {
		older = "alive"
	}
	return set(Unknown, ReasonUnverified, "pid %d is %s, but %s does not look like the Copilot CLI%s%s.", r.pid, older, clip(strings.Join(p.argv, " "), 120), holdNote, timeNote)
}

// judgeDeadBriefly applies the rules to an old-format lock (a regular
// .lock, no .hold) whose pid no process or thread has, as judge does
// (rules 2 and 3, and what makes their stale verdict stand), but without
// formatting anything; ok is false for any other lock.
func (e *Engine) judgeDeadBriefly(r lockRef, sg *sight) (Verdict, Reason, bool) {
	if !pidGone(r.pid) {
		return "", "", false
	}
	if sg.vantage().blindness() != "" {
		return Unknown, ReasonUnprobeable, true
	}
	notBefore := sg.began
	if !sg.fresh {
		notBefore = r.lock.modTime()
	}
	if len(e.inOtherNamespaces(r.pid, notBefore)) > 0 {
		return "", "", false // judged in full: the time matters there
	}
	written := r.lock.modTime()
	boot, bootErr := bootTime()
	tol := e.tolerance(boot, bootErr)
	untrusted := written.After(time.Now().Add(tol)) || written.Before(cliEpoch)
	if !untrusted && bootErr == nil && written.Before(boot.Add(-tol)) {
		return Stale, ReasonPredatesBoot, true
	}
	return Stale, ReasonProcessExited, true
}

// cliEpoch is when the Copilot CLI began writing session locks, give or
// take: no lock can be older.
var cliEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// readProcIf reads pid, unless it is named, whose facts p already are.
func readProcIf(pid, named int, p procInfo) procInfo {
	if pid == named {
		return p
	}
	return readProc(pid)
}

// threadOf says whose thread p is: " of pid 812 (sleep 600)".
func threadOf(p procInfo) string {
	if p.tgid <= 0 {
		return ""
	}
	return fmt.Sprintf(" of pid %d (%s)", p.tgid, describe(readProc(p.tgid)))
}

func processOf(p procInfo) *Process {
	if p.state != procAlive && p.state != procZombie {
		return nil
	}
	return &Process{StartedAt: p.start, Command: strings.Join(p.argv, " "), Argv: p.argv, UID: p.uid}
}

func describe(p procInfo) string {
	if len(p.argv) == 0 {
		return "a process whose command line is unreadable"
	}
	return clip(strings.Join(p.argv, " "), 80)
}

// nameOf is " (copilot)": the program a live process runs, or "".
func nameOf(p procInfo) string {
	if p.state == procAlive && len(p.argv) > 0 {
		return " (" + clip(baseName(p.argv[0]), 40) + ")"
	}
	return ""
}

func heldBy(pid int, p procInfo) string {
	if p.state == procAlive && len(p.argv) > 0 {
		return fmt.Sprintf("; its lock names pid %d, a running %s", pid, clip(baseName(p.argv[0]), 40))
	}
	return ""
}

func pidNow(pid int, p procInfo) string {
	switch p.state {
	case procGone:
		return fmt.Sprintf("; pid %d is not running", pid)
	case procZombie:
		return fmt.Sprintf("; pid %d is a zombie", pid)
	case procThread:
		return fmt.Sprintf("; pid %d is now a thread%s, not a process", pid, threadOf(p))
	case procAlive:
		return fmt.Sprintf("; pid %d now belongs to %s", pid, describe(p))
	}
	return ""
}

func kindOf(id fileID) string {
	switch fs.FileMode(id.mode) {
	case fs.ModeSymlink:
		return "symbolic link"
	case fs.ModeNamedPipe:
		return "FIFO"
	case fs.ModeDir:
		return "directory"
	case fs.ModeSocket:
		return "socket"
	}
	return "device or special file"
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func stamp(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

// human renders a duration the way a person says it: "2h", "3m", "4.2s".
func human(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + human(-d)
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
