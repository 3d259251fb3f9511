package rpc

import (
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

func TestResumeMessage(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 30, 0, 0, time.Local)
	cli := &sessionlocks.Process{StartedAt: now.Add(-28 * time.Minute), Argv: []string{"/opt/node_modules/@github/copilot-linux-x64/copilot", "--resume=x"}}
	node := &sessionlocks.Process{StartedAt: now.AddDate(0, 0, -2), Command: `C:\Program Files\nodejs\node.exe server.js`}
	live := sessionlocks.Holder{PID: 4242, Verdict: sessionlocks.Live, Process: cli}
	for _, c := range []struct {
		name string
		s    sessionlocks.Session
		want string
	}{
		{"free", sessionlocks.Session{State: sessionlocks.StateFree}, "Not in use: no process holds this session."},
		{"live", sessionlocks.Session{State: sessionlocks.StateInUse, Holders: []sessionlocks.Holder{live}},
			"In use by pid 4242 (copilot), started 10:02."},
		{"conflict", sessionlocks.Session{State: sessionlocks.StateInUse, Conflict: true, Holders: []sessionlocks.Holder{live, {PID: 7, Verdict: sessionlocks.Live}}},
			"In use by pid 4242 (copilot), started 10:02 and 1 other process (more than one process holds it)."},
		{"unknown", sessionlocks.Session{State: sessionlocks.StateUnknown, Holders: []sessionlocks.Holder{
			{PID: 99, Verdict: sessionlocks.Unknown, Process: node, Detail: "pid 99 is alive and older than the lock, but does not look like the Copilot CLI."}}},
			"Might be in use by pid 99 (node.exe), started Nov 20 10:30: cannot tell (it is alive and older than the lock, but does not look like the Copilot CLI)."},
		// Issue 17: the pid was named three times; "pid 990" is another pid.
		{"unknown names the pid once", sessionlocks.Session{State: sessionlocks.StateUnknown, Holders: []sessionlocks.Holder{
			{PID: 99, Verdict: sessionlocks.Unknown, Detail: "pid 99 is not running; the lock was written 3m ago; but in another PID namespace pid 99 (pid 990 here) is sh, alive."}}},
			"Might be in use by pid 99: cannot tell (it is not running; the lock was written 3m ago; but in another PID namespace it (pid 990 here) is sh, alive)."},
		// Issue 17: a CLI running for days showed "started 06:01", no date.
		{"live for days", sessionlocks.Session{State: sessionlocks.StateInUse, Holders: []sessionlocks.Holder{
			{PID: 4242, Verdict: sessionlocks.Live, Process: &sessionlocks.Process{StartedAt: time.Date(2026, 11, 20, 6, 1, 0, 0, time.Local), Argv: []string{"copilot"}}}}},
			"In use by pid 4242 (copilot), started Nov 20 06:01."},
		{"live since yesterday, less than a day", sessionlocks.Session{State: sessionlocks.StateInUse, Holders: []sessionlocks.Holder{
			{PID: 4242, Verdict: sessionlocks.Live, Process: &sessionlocks.Process{StartedAt: time.Date(2026, 11, 21, 23, 59, 0, 0, time.Local), Argv: []string{"copilot"}}}}},
			"In use by pid 4242 (copilot), started Nov 21 23:59."},
		{"live since last year", sessionlocks.Session{State: sessionlocks.StateInUse, Holders: []sessionlocks.Holder{
			{PID: 4242, Verdict: sessionlocks.Live, Process: &sessionlocks.Process{StartedAt: time.Date(2025, 12, 31, 6, 1, 0, 0, time.Local), Argv: []string{"copilot"}}}}},
			"In use by pid 4242 (copilot), started Dec 31 2025 06:01."},
		{"stale", sessionlocks.Session{State: sessionlocks.StateStale, Holders: []sessionlocks.Holder{{PID: 1, Verdict: sessionlocks.Stale}, {PID: 2, Verdict: sessionlocks.Stale}}},
			"Not in use: the locks left by pids 1, 2 are stale and can be reclaimed."},
		{"no process info", sessionlocks.Session{State: sessionlocks.StateInUse, Holders: []sessionlocks.Holder{{PID: 5, Verdict: sessionlocks.Live}}},
			"In use by pid 5."},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := resumeMessage(c.s, now); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestWireTime(t *testing.T) {
	if got := wireTime(time.Time{}); got != "" {
		t.Errorf("zero time: %q", got)
	}
	tm := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("X", 3600))
	if got := wireTime(tm); got != "2026-01-02T02:04:05.006Z" {
		t.Errorf("got %q", got)
	}
}
