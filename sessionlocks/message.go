package sessionlocks

// A session's one sentence for the IDE's prompt ("In use by pid 4242
// (copilot), started 10:02."), from its holders' verdicts and facts.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Message is one sentence that says whether the session is in use and by
// whom, for the IDE's prompt; now dates the times it names.
func (s Session) Message(now time.Time) string {
	var live, unknown, stale []Holder
	for _, h := range s.Holders {
		switch h.Verdict {
		case Live:
			live = append(live, h)
		case Unknown:
			unknown = append(unknown, h)
		default:
			stale = append(stale, h)
		}
	}
	switch {
	case len(live) > 0:
		return liveMessage(s, live, now)
	case len(unknown) > 0:
		h := unknown[0]
		msg := "Might be in use by " + describeHolder(h, now) + others(len(unknown)-1) + ": cannot tell"
		why := strings.TrimRight(samePID(h.Detail, h.PID), ".")
		if h.Reason == ReasonUnverified {
			why = "it is alive and older than the lock, but does not look like the Copilot CLI"
		}
		if why != "" {
			msg += " (" + why + ")"
		}
		return msg + "."
	case len(stale) > 0:
		pids := make([]string, len(stale))
		for i, h := range stale {
			pids[i] = strconv.Itoa(h.PID)
		}
		return fmt.Sprintf("Not in use: the %s left by %s %s %s stale and can be reclaimed.",
			plural(len(stale), "lock", "locks"), plural(len(stale), "pid", "pids"), strings.Join(pids, ", "),
			plural(len(stale), "is", "are"))
	case s.State == StateUnknown:
		return "Might be in use: a lock file of this session is being removed, or an interrupted removal could not be finished yet."
	}
	return "Not in use: no process holds this session."
}

func liveMessage(s Session, live []Holder, now time.Time) string {
	h := live[0]
	var msg string
	switch {
	case h.Reason == ReasonStarting && h.Process == nil:
		// Never "in use by" a pid that is not running.
		msg = fmt.Sprintf("Opening, or its CLI has just exited: pid %d is not running here", h.PID)
		if !h.RecheckAt.IsZero() {
			msg += fmt.Sprintf("; checked again in %s", human(max(h.RecheckAt.Sub(now), 0).Round(time.Second)))
		}
	case h.Process == nil && h.Reason == ReasonHoldLocked:
		// The lock is held, but not by a process this machine ties to the pid.
		msg = fmt.Sprintf("In use: its kernel lock is held by a process this machine cannot tie to pid %d, which its lock names", h.PID)
	case h.Orphaned != nil && *h.Orphaned:
		msg = "In use by " + describeHolder(h, now) + ", left running after its launcher exited; nobody is attached"
	default:
		msg = "In use by " + describeHolder(h, now)
	}
	msg += others(len(live) - 1)
	if s.Conflict {
		msg += " (more than one process holds it)"
	}
	return msg + "."
}

func others(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" and %d other %s", n, plural(n, "process", "processes"))
}

// samePID says "it" for pid in a detail that follows "pid N" in the message.
func samePID(detail string, pid int) string {
	re := regexp.MustCompile(`\bpid ` + strconv.Itoa(pid) + `\b`)
	return re.ReplaceAllString(detail, "it")
}

// describeHolder says "pid 4242 (copilot), started 10:02".
func describeHolder(h Holder, now time.Time) string {
	out := fmt.Sprintf("pid %d", h.PID)
	if p := h.Process; p != nil {
		if name := CommandName(p); name != "" {
			out += " (" + clip(name, 40) + ")"
		}
		if !p.StartedAt.IsZero() {
			out += ", started " + clock(p.StartedAt, now)
		}
	}
	return out
}

// CommandName is the program's file name: argv[0]'s, or for a command line
// read as one string, its first word (a Windows path up to ".exe").
func CommandName(p *Process) string {
	arg0 := ""
	switch lc := strings.ToLower(p.Command); {
	case len(p.Argv) > 0:
		arg0 = p.Argv[0]
	case strings.Contains(lc, ".exe"):
		arg0 = p.Command[:strings.Index(lc, ".exe")+len(".exe")] // a Windows path may contain spaces
	case len(strings.Fields(p.Command)) > 0:
		arg0 = strings.Fields(p.Command)[0]
	}
	return baseName(arg0)
}

// clock is a time as a person reads it near now: "10:02", "Nov 20 06:01",
// "Dec 31 2025 06:01".
func clock(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	y1, m1, d1 := t.Date()
	y2, m2, d2 := now.Date()
	switch {
	case y1 == y2 && m1 == m2 && d1 == d2:
		return t.Format("15:04")
	case y1 == y2:
		return t.Format("Jan 2 15:04")
	}
	return t.Format("Jan 2 2006 15:04")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
