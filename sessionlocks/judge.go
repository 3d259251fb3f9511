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
	k := probeKey{path: r.keyPath, mtime: r.lock.mtime, pid: r.pid, hold: r.hold}
	if !r.lock.exists() {
		k.mtime = r.hold.mtime
	}
	return k
}

// judge applies the verdict rules to one holder. The rules, in order:
//
//  1. .hold present and the lock older than the settle window: if the
//     .hold's flock is held, live (hold-locked); if it is free, stale
//     (hold-released), unless the named process is provably the lock's
//     writer and still alive (then rules 6-7 decide: a live writer is never
//     called stale).
//  2. lock written before the machine booted: stale (predates-boot).
//  3. no such process, or a zombie: stale (process-exited).
//  4. process started after the lock was written: stale (pid-reused).
//  5. lock younger than the settle window, process alive: live (starting).
//  6. process older than the lock and its argv is the Copilot CLI: live (verified).
//  7. otherwise unknown: unverified, or unprobeable when facts are missing.
//
// opLocked says the caller holds the session's operation lock, under which no
// CLI can be opening the session: the .hold may then be probed at any age.
func (e *Engine) judge(r lockRef, now time.Time, opLocked bool) Holder {
	h := Holder{
		SessionID: r.sessionID,
		PID:       r.pid,
		LockFile:  r.lockPath(),
		ProbedAt:  now,
		lockID:    r.lock,
		holdID:    r.hold,
	}
	written := r.lock
	if r.hold.exists() {
		h.HoldFile = r.holdPath()
	}
	if !r.lock.exists() {
		written = r.hold
	}
	h.LockWrittenAt = time.Unix(0, written.mtime)
	age := now.Sub(h.LockWrittenAt)
	name := filepath.Base(h.LockFile)

	set := func(v Verdict, why Reason, format string, args ...any) Holder {
		h.Verdict, h.Reason, h.Detail = v, why, fmt.Sprintf(format, args...)
		return h
	}

	if r.lock.exists() && !isRegular(r.lock) {
		return set(Unknown, ReasonUnprobeable, "%s is a %s, not a regular file, so it was not opened; it is left alone.", name, kindOf(r.lock))
	}

	p := readProc(r.pid)
	h.Process = processOf(p)
	boot, bootErr := bootTime()
	tol := e.tolerance(boot, bootErr)
	writerAlive := p.state == procAlive && !p.start.IsZero() && !p.start.After(h.LockWrittenAt.Add(tol))
	h.WriterVerified = writerAlive && isCopilotArgv(p.argv)

	// Rule 1: the kernel lock on the .hold is the strongest evidence there
	// is. It is probed only once the lock is older than the settle window:
	// a CLI creates its .hold about a millisecond after its .lock and flocks
	// it a moment later, and a probe's shared flock landing in between would
	// make the CLI's own exclusive flock fail. A young lock is judged by
	// rules 3-5 instead, which call it live while its process runs.
	holdNote := ""
	if r.hold.exists() && (age >= e.settle || opLocked) {
		hp := probeHold(h.HoldFile, r.hold)
		switch {
		case errors.Is(hp.err, errChanged):
			// Re-created since the scan: a CLI is opening the session now.
			return set(Live, ReasonStarting, "%s was re-created while it was being examined, so a CLI is opening the session.", filepath.Base(h.HoldFile))
		case hp.err != nil:
			holdNote = fmt.Sprintf(" (the .hold could not be probed: %v)", hp.err)
		case hp.held:
			if !r.lock.exists() {
				return set(Live, ReasonHoldLocked, "The kernel lock on %s is held, so a live process still has the session open, although its inuse.%d.lock is missing.", filepath.Base(h.HoldFile), r.pid)
			}
			return set(Live, ReasonHoldLocked, "The kernel lock on %s is held%s, so the session is open.", filepath.Base(h.HoldFile), heldBy(r.pid, p))
		default:
			h.holdFree = true
			h.holdID = hp.id
			if !r.lock.exists() {
				return set(Stale, ReasonHoldReleased, "%s is left over without its .lock and nobody holds its kernel lock.", filepath.Base(h.HoldFile))
			}
			if !writerAlive {
				return set(Stale, ReasonHoldReleased, "Nobody holds the kernel lock on %s any more, so the CLI that wrote the lock %s ago has exited%s.", filepath.Base(h.HoldFile), human(age), pidNow(r.pid, p))
			}
			holdNote = fmt.Sprintf(" (its %s is not locked, but the process that wrote the lock is still running)", filepath.Base(h.HoldFile))
		}
	}

	// A young lock with a .hold that was not probed: the CLI that made it
	// may be alive where this process cannot see it (another PID namespace,
	// a container sharing ~/.copilot, another host on a shared home) and
	// only the .hold's kernel lock would tell. Until the settle window has
	// passed and the .hold can be probed safely, the session counts as
	// opening, whatever the pid says.
	if r.hold.exists() && age < e.settle && !opLocked {
		seen := fmt.Sprintf("pid %d is %s", r.pid, describe(p))
		switch p.state {
		case procGone, procZombie:
			seen = fmt.Sprintf("pid %d is not running here (a CLI in another container or PID namespace would look the same)", r.pid)
		case procUnknown:
			seen = fmt.Sprintf("pid %d could not be examined", r.pid)
		}
		return set(Live, ReasonStarting, "The lock was written %s ago and its .hold exists; %s. The .hold's kernel lock is examined once the lock is older than the settle window (%s): until then the session counts as opening.", human(age), seen, e.settle)
	}

	// Rule 2.
	if bootErr == nil && h.LockWrittenAt.Before(boot.Add(-tol)) {
		return set(Stale, ReasonPredatesBoot, "%s was written at %s, before the machine booted at %s.", name, stamp(h.LockWrittenAt), stamp(boot))
	}

	// Rule 3.
	switch p.state {
	case procGone:
		return set(Stale, ReasonProcessExited, "pid %d is not running; the lock was written %s ago.", r.pid, human(age))
	case procZombie:
		return set(Stale, ReasonProcessExited, "pid %d has exited (a zombie its parent has not reaped yet); the lock was written %s ago.", r.pid, human(age))
	case procUnknown:
		if age < e.settle {
			// Not knowing whether it runs, a young lock is treated as mid-open:
			// the safe side of an unknown.
			return set(Live, ReasonStarting, "The lock was written %s ago and pid %d could not be examined (%v); a CLI may still be opening the session.", human(age), r.pid, p.err)
		}
		return set(Unknown, ReasonUnprobeable, "pid %d could not be examined: %v.", r.pid, p.err)
	}

	// Rule 4.
	if !p.start.IsZero() && p.start.After(h.LockWrittenAt.Add(tol)) {
		return set(Stale, ReasonPIDReused, "pid %d is now %s, started %s after the lock was written, so it is not the process that wrote it.", r.pid, describe(p), human(p.start.Sub(h.LockWrittenAt)))
	}

	// Rule 5.
	if age < e.settle {
		return set(Live, ReasonStarting, "The lock was written %s ago and pid %d (%s) is alive; a CLI may still be opening the session (settle window %s).", human(age), r.pid, describe(p), e.settle)
	}

	// Rule 6.
	if h.WriterVerified {
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
	return set(Unknown, ReasonUnverified, "pid %d is alive and older than the lock, but %s does not look like the Copilot CLI%s.", r.pid, clip(strings.Join(p.argv, " "), 120), holdNote)
}

// isCopilotArgv recognises the Copilot CLI by its command line, never by
// comm (the real CLI's comm is "MainThread"). Accepted: the native binary
// (argv[0] named copilot or copilot.exe, e.g. .../@github/copilot-linux-x64/copilot),
// and a runtime or wrapper running it (node .../@github/copilot/npm-loader.js,
// agency copilot).
func isCopilotArgv(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	if isCopilotName(argv[0]) {
		return true
	}
	// A single string with spaces: a process that rewrote its argv.
	if len(argv) == 1 {
		if f := strings.Fields(argv[0]); len(f) > 1 {
			return isCopilotArgv(f)
		}
		return false
	}
	switch strings.TrimSuffix(strings.ToLower(baseName(argv[0])), ".exe") {
	case "node", "bun", "deno", "agency", "npx":
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			return isCopilotName(a) || strings.Contains(filepath.ToSlash(a), "@github/copilot")
		}
	}
	return false
}

func isCopilotName(p string) bool {
	b := strings.ToLower(baseName(p))
	return b == "copilot" || b == "copilot.exe"
}

// baseName splits on both separators: a Windows command line seen on any OS.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
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

func heldBy(pid int, p procInfo) string {
	if p.state == procAlive && len(p.argv) > 0 {
		return fmt.Sprintf(" (pid %d is %s)", pid, clip(baseName(p.argv[0]), 40))
	}
	return ""
}

func pidNow(pid int, p procInfo) string {
	switch p.state {
	case procGone:
		return fmt.Sprintf("; pid %d is not running", pid)
	case procZombie:
		return fmt.Sprintf("; pid %d is a zombie", pid)
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
