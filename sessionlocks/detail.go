package sessionlocks

// The sentence a person reads for a verdict: built from the same facts the
// rules read (rules.go) and the reason they gave, apart from deciding.

import (
	"cmp"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"time"
)

// detail says, in one sentence, why the rules gave f the reason r.
func detail(f *facts, v Verdict, r Reason) string {
	hold, lock := holdFileName(f.pid), lockFileName(f.pid)
	switch {
	case f.statErr != nil:
		return fmt.Sprintf("The files of pid %d's lock could not be examined (%v), so they are left alone.", f.pid, f.statErr)
	case f.lock.exists() && !isRegular(f.lock):
		return fmt.Sprintf("%s is a %s, not a regular file, so it was not opened; it is left alone.", lock, kindOf(f.lock))
	case f.holdSeen:
		return fmt.Sprintf("The kernel lock on %s is held by pid %d%s through a descriptor it has open on it, so the session is open.", hold, f.pid, nameOf(f.proc))
	case f.holdTable:
		return fmt.Sprintf("The kernel lock on %s is held (the machine's lock table shows it), although pid %d is not running here: a CLI this sidecar cannot see has the session open.", hold, f.pid)
	case f.probe != nil && f.probe.changed:
		return fmt.Sprintf("%s was re-created while it was being examined, so a CLI is opening the session.", hold)
	case r == ReasonHoldLocked && !f.lock.exists():
		return fmt.Sprintf("The kernel lock on %s is held, so a live process still has the session open, although its %s is missing.", hold, lock)
	case r == ReasonHoldLocked:
		return fmt.Sprintf("The kernel lock on %s is held, so the session is open%s.", hold, heldBy(f.pid, f.proc))
	case r == ReasonHoldReleased && !f.lock.exists():
		return fmt.Sprintf("%s is left over without its .lock and nobody holds its kernel lock.", hold)
	case r == ReasonHoldReleased && f.untrusted():
		return fmt.Sprintf("Nobody holds the kernel lock on %s any more, so the CLI that wrote the lock has exited%s%s.", hold, pidNow(f.pid, f.proc), timeNote(f))
	case r == ReasonHoldReleased:
		return fmt.Sprintf("Nobody holds the kernel lock on %s any more, so the CLI that wrote the lock %s ago has exited%s.", hold, human(f.age), pidNow(f.pid, f.proc))
	case f.probe != nil && f.probe.err == nil && !f.probe.held && r == ReasonUnprobeable && !f.strictWriter():
		return fmt.Sprintf("Nobody on this machine holds the kernel lock on %s, but %s.", hold, whyPIDsProveNothing(f))
	case r == ReasonStarting && f.probe == nil && f.hold.exists():
		return fmt.Sprintf("The lock was written %s ago and its .hold exists; %s. The .hold's kernel lock is examined once the lock is older than the settle window (%s): until then the session counts as opening.", human(f.age), youngPID(f), f.settle)
	}
	if s := f.pidStale(); s != "" {
		return pidDetail(f, v, r, s)
	}
	return aliveDetail(f, r)
}

// pidDetail is the sentence for a verdict from what the pid is now (rules
// 2-4): stale, or not stale after all because of what this process cannot
// see or what another PID namespace holds.
func pidDetail(f *facts, v Verdict, r, stale Reason) string {
	var d string
	switch stale {
	case ReasonPredatesBoot:
		d = fmt.Sprintf("%s was written at %s, before the machine booted at %s.", lockFileName(f.pid), stamp(f.written), stamp(f.boot))
	case ReasonPIDReused:
		d = fmt.Sprintf("pid %d is now %s, started %s after the lock was written, so it is not the process that wrote it.", f.pid, describe(f.proc), human(f.proc.start.Sub(f.written)))
		if f.cli {
			d = fmt.Sprintf("pid %d is now %s, started %s after the lock was written (more than the %s allowed for clocks that disagree), so it is not the process that wrote it.", f.pid, describe(f.proc), human(f.proc.start.Sub(f.written)), human(f.writerTol()))
		}
	default:
		d = fmt.Sprintf("pid %d %s; %s.", f.pid, goneText(f.proc), when(f))
	}
	switch {
	case v == Stale:
		return d
	case f.pidsProveNothing():
		return fmt.Sprintf("%s; but %s.", strings.TrimSuffix(d, "."), whyPIDsProveNothing(f))
	case r == ReasonVerified:
		return fmt.Sprintf("pid %d is the Copilot CLI in another PID namespace (pid %d here: %s), running since %s, before the lock was written.", f.pid, f.ns.pid, clip(strings.Join(f.ns.argv, " "), 120), stamp(f.ns.start))
	}
	return fmt.Sprintf("%s; but in another PID namespace pid %d (pid %d here) is %s, alive and older than the lock, which does not look like the Copilot CLI, though it may have written it.", strings.TrimSuffix(d, "."), f.pid, f.ns.pid, clip(strings.Join(f.ns.argv, " "), 80))
}

// aliveDetail is the sentence for a named process that runs (rules 5-7).
func aliveDetail(f *facts, r Reason) string {
	p := f.proc
	argv := clip(strings.Join(p.argv, " "), 120)
	switch {
	case p.state == procUnknown && r == ReasonStarting:
		return fmt.Sprintf("The lock was written %s ago and pid %d could not be examined (%v); a CLI may still be opening the session.", human(f.age), f.pid, p.err)
	case p.state == procUnknown:
		return fmt.Sprintf("pid %d could not be examined: %v.", f.pid, p.err)
	case r == ReasonStarting:
		return fmt.Sprintf("The lock was written %s ago and pid %d (%s) is alive; a CLI may still be opening the session (settle window %s).", human(f.age), f.pid, describe(p), f.settle)
	case r == ReasonVerified && f.untrusted():
		return fmt.Sprintf("pid %d is the Copilot CLI (%s), running since %s%s%s.", f.pid, argv, stamp(p.start), holdNote(f), timeNote(f))
	case r == ReasonVerified && p.start.After(f.written.Add(f.tol)):
		return fmt.Sprintf("pid %d is the Copilot CLI (%s), started %s after the lock was written: within the %s allowed for clocks that disagree, so it is taken for the lock's writer%s.", f.pid, argv, human(p.start.Sub(f.written)), human(f.writerTol()), holdNote(f))
	case r == ReasonVerified:
		return fmt.Sprintf("pid %d is the Copilot CLI (%s), running since %s, before the lock was written%s.", f.pid, argv, stamp(p.start), holdNote(f))
	case r == ReasonUnprobeable:
		why := "its start time or command line could not be read"
		if p.err != nil {
			why = p.err.Error()
		}
		return fmt.Sprintf("pid %d is alive but could not be examined fully (%s)%s.", f.pid, why, holdNote(f))
	}
	older := "alive and older than the lock"
	if f.untrusted() {
		older = "alive"
	}
	return fmt.Sprintf("pid %d is %s, but %s does not look like the Copilot CLI%s%s.", f.pid, older, clip(strings.Join(p.argv, " "), 60), holdNote(f), timeNote(f))
}

// whyPIDsProveNothing says why a pid here says nothing of the lock's writer.
func whyPIDsProveNothing(f *facts) string {
	switch {
	case f.otherOS == "" && f.sharedFS == "" && !f.nestedNS:
		return "nothing in the session says yet which system wrote it, and for its first moments a CLI in a VM or WSL sharing this directory looks exactly so"
	case f.otherOS != "":
		return "this session was written on " + f.otherOS + ", perhaps a VM or WSL sharing this directory, whose processes and locks this machine cannot see"
	case f.sharedFS != "":
		return "the state dir is on " + f.sharedFS + ", which other machines may share: a CLI on another machine would look the same"
	}
	return "this sidecar runs in a PID namespace of its own (a sandbox such as Flatpak), which hides every process outside it: a CLI outside would look the same"
}

// youngPID says what the pid of a young lock with an unprobed .hold is.
func youngPID(f *facts) string {
	switch f.proc.state {
	case procGone, procZombie, procThread:
		if f.ns != nil {
			return fmt.Sprintf("pid %d is not running here, but in another PID namespace pid %d (pid %d here) is %s", f.pid, f.pid, f.ns.pid, clip(strings.Join(f.ns.argv, " "), 80))
		}
		if f.pidsProveNothing() {
			return fmt.Sprintf("pid %d is not running here, but %s", f.pid, whyPIDsProveNothing(f))
		}
		return fmt.Sprintf("pid %d is not running here (a CLI in another container or PID namespace would look the same)", f.pid)
	case procUnknown:
		return fmt.Sprintf("pid %d could not be examined", f.pid)
	}
	return fmt.Sprintf("pid %d is %s", f.pid, describe(f.proc))
}

func goneText(p procInfo) string {
	switch p.state {
	case procZombie:
		if runtime.GOOS == "windows" {
			return "has exited (a handle another process holds keeps its pid)"
		}
		return "has exited (a zombie its parent has not reaped yet)"
	case procThread:
		return "is not a process but a thread" + threadOf(p) + ", so no process has it"
	}
	return "is not running"
}

// when says how old the lock is, or why its time is no evidence.
func when(f *facts) string {
	if f.untrusted() {
		return strings.TrimSuffix(strings.TrimPrefix(timeNote(f), " ("), ")")
	}
	return fmt.Sprintf("the lock was written %s ago", human(f.age))
}

// timeNote says why the lock's time is no evidence, or "".
func timeNote(f *facts) string {
	switch {
	case f.age < -f.tol:
		return fmt.Sprintf(" (the lock is dated %s, %s in the future: a clock was wrong when it was written)", stamp(f.written), human(-f.age))
	case f.written.Before(cliEpoch):
		return fmt.Sprintf(" (the lock is dated %s, before any Copilot CLI existed: a clock, or a file system that cannot store the date, was wrong)", stamp(f.written))
	}
	return ""
}

// holdNote says what the .hold said when it did not decide.
func holdNote(f *facts) string {
	switch p := f.probe; {
	case p == nil:
		return ""
	case p.err != nil:
		return fmt.Sprintf(" (the .hold could not be probed: %v)", p.err)
	case !p.held:
		return fmt.Sprintf(" (its %s is not locked, but the process that wrote the lock is still running)", holdFileName(f.pid))
	}
	return ""
}

// threadOf says whose thread p is: " of pid 812 (sleep 600)".
func threadOf(p procInfo) string {
	if p.tgid <= 0 {
		return ""
	}
	return fmt.Sprintf(" of pid %d (%s)", p.tgid, describe(readProc(p.tgid)))
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
	switch {
	case p.state == procAlive && len(p.argv) > 0:
		return fmt.Sprintf("; its lock names pid %d, a running %s", pid, clip(baseName(p.argv[0]), 40))
	case p.state == procGone || p.state == procZombie || p.state == procThread:
		return fmt.Sprintf(", although pid %d, which its lock names, is not running here: a CLI this sidecar cannot see holds it", pid)
	}
	return ""
}

func pidNow(pid int, p procInfo) string {
	switch p.state {
	case procGone:
		return fmt.Sprintf("; pid %d is not running", pid)
	case procZombie:
		if runtime.GOOS == "windows" {
			return fmt.Sprintf("; pid %d has exited (a handle another process holds keeps its pid)", pid)
		}
		return fmt.Sprintf("; pid %d is a zombie", pid)
	case procThread:
		return fmt.Sprintf("; pid %d is now a thread%s, not a process", pid, threadOf(p))
	case procAlive:
		return fmt.Sprintf("; pid %d now belongs to %s", pid, describe(p))
	}
	return ""
}

var kinds = map[fs.FileMode]string{fs.ModeSymlink: "symbolic link", fs.ModeNamedPipe: "FIFO", fs.ModeDir: "directory", fs.ModeSocket: "socket"}

func kindOf(id fileID) string { return cmp.Or(kinds[fs.FileMode(id.mode)], "device or special file") }

// clip shortens s to at most n bytes, never inside a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - 3
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "..."
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
