package rpc

// canResume's one sentence for the IDE's prompt, which `explain` shows too.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// ResumeMessage is canResume's message for s, judged at now: `explain`
// shows the sentence the IDE shows.
func ResumeMessage(s sessionlocks.Session, now time.Time) string { return resumeMessage(s, now) }

// resumeMessage is canResume's one sentence for the IDE's prompt. Clock
// times are local: the person reading the prompt sits at this machine.
func resumeMessage(s sessionlocks.Session, now time.Time) string {
	var live, unknown, stale []sessionlocks.Holder
	for _, h := range s.Holders {
		switch h.Verdict {
		case sessionlocks.Live:
			live = append(live, h)
		case sessionlocks.Unknown:
			unknown = append(unknown, h)
		default:
			stale = append(stale, h)
		}
	}
	switch {
	case len(live) > 0:
		msg := "In use by " + describeHolder(live[0], now)
		if n := len(live) - 1; n > 0 {
			msg += fmt.Sprintf(" and %d other %s", n, plural(n, "process", "processes"))
		}
		if s.Conflict {
			msg += " (more than one process holds it)"
		}
		return msg + "."
	case len(unknown) > 0:
		h := unknown[0]
		msg := "Might be in use by " + describeHolder(h, now)
		if n := len(unknown) - 1; n > 0 {
			msg += fmt.Sprintf(" and %d other %s", n, plural(n, "process", "processes"))
		}
		msg += ": cannot tell"
		if d := strings.TrimRight(samePID(h.Detail, h.PID), "."); d != "" {
			msg += " (" + d + ")"
		}
		return msg + "."
	case len(stale) > 0:
		pids := make([]string, len(stale))
		for i, h := range stale {
			pids[i] = fmt.Sprint(h.PID)
		}
		return fmt.Sprintf("Not in use: the %s left by %s %s %s stale and can be reclaimed.",
			plural(len(stale), "lock", "locks"), plural(len(stale), "pid", "pids"), strings.Join(pids, ", "),
			plural(len(stale), "is", "are"))
	}
	return "Not in use: no process holds this session."
}

// samePID says "it" for pid in a detail that follows "pid N" in the
// message, which then names the pid once, not three times.
func samePID(detail string, pid int) string {
	re := regexp.MustCompile(`\bpid ` + strconv.Itoa(pid) + `\b`)
	return re.ReplaceAllString(detail, "it")
}

// describeHolder says "pid 4242 (copilot), started 10:02".
func describeHolder(h sessionlocks.Holder, now time.Time) string {
	out := fmt.Sprintf("pid %d", h.PID)
	if p := h.Process; p != nil {
		if name := commandName(p); name != "" {
			out += " (" + name + ")"
		}
		if !p.StartedAt.IsZero() {
			out += ", started " + clock(p.StartedAt, now)
		}
	}
	return out
}

func commandName(p *sessionlocks.Process) string {
	arg0 := ""
	if len(p.Argv) > 0 {
		arg0 = p.Argv[0]
	} else if i := strings.Index(strings.ToLower(p.Command), ".exe"); i >= 0 {
		arg0 = p.Command[:i+len(".exe")] // a Windows path may contain spaces
	} else if f := strings.Fields(p.Command); len(f) > 0 {
		arg0 = f[0]
	}
	// filepath.Base does not split on '\' off Windows; a Windows path may be
	// reported anywhere the tests run.
	if i := strings.LastIndexAny(arg0, `/\`); i >= 0 {
		arg0 = arg0[i+1:]
	}
	return arg0
}

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
