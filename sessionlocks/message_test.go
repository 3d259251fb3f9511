package sessionlocks

import (
	"testing"
	"time"
)

func TestMessage(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 30, 0, 0, time.Local)
	cli := &Process{StartedAt: now.Add(-28 * time.Minute), Argv: []string{"/opt/node_modules/@github/copilot-linux-x64/copilot", "--resume=x"}}
	node := &Process{StartedAt: now.AddDate(0, 0, -2), Command: `C:\Program Files\nodejs\node.exe server.js`}
	live := Holder{PID: 4242, Verdict: Live, Process: cli}
	yes := true
	orphan := live
	orphan.Orphaned = &yes
	for _, c := range []struct {
		name string
		s    Session
		want string
	}{
		{"free", Session{State: StateFree}, "Not in use: no process holds this session."},
		{"live", Session{State: StateInUse, Holders: []Holder{live}},
			"In use by pid 4242 (copilot), started 10:02."},
		{"conflict", Session{State: StateInUse, Conflict: true, Holders: []Holder{live, {PID: 7, Verdict: Live}}},
			"In use by pid 4242 (copilot), started 10:02 and 1 other process (more than one process holds it)."},
		{"unknown: no command line in the sentence", Session{State: StateUnknown, Holders: []Holder{
			{PID: 99, Verdict: Unknown, Reason: ReasonUnverified, Process: node, Detail: `pid 99 is alive and older than the lock, but C:\Program Files\nodejs\node.exe server.js --port 8080 --verbose does not look like the Copilot CLI.`}}},
			"Might be in use by pid 99 (node.exe), started Nov 20 10:30: cannot tell (it is alive and older than the lock, but does not look like the Copilot CLI)."},
		{"unknown names the pid once", Session{State: StateUnknown, Holders: []Holder{
			{PID: 99, Verdict: Unknown, Reason: ReasonUnprobeable, Detail: "pid 99 is not running; the lock was written 3m ago; but the state dir is on nfs."}}},
			"Might be in use by pid 99: cannot tell (it is not running; the lock was written 3m ago; but the state dir is on nfs)."},
		{"live for days", Session{State: StateInUse, Holders: []Holder{
			{PID: 4242, Verdict: Live, Process: &Process{StartedAt: time.Date(2026, 11, 20, 6, 1, 0, 0, time.Local), Argv: []string{"copilot"}}}}},
			"In use by pid 4242 (copilot), started Nov 20 06:01."},
		{"live since last year", Session{State: StateInUse, Holders: []Holder{
			{PID: 4242, Verdict: Live, Process: &Process{StartedAt: time.Date(2025, 12, 31, 6, 1, 0, 0, time.Local), Argv: []string{"copilot"}}}}},
			"In use by pid 4242 (copilot), started Dec 31 2025 06:01."},
		{"stale", Session{State: StateStale, Holders: []Holder{{PID: 1, Verdict: Stale}, {PID: 2, Verdict: Stale}}},
			"Not in use: the locks left by pids 1, 2 are stale and can be reclaimed."},
		{"no process info", Session{State: StateInUse, Holders: []Holder{{PID: 5, Verdict: Live}}},
			"In use by pid 5."},
		{"starting, its pid running nowhere here", Session{State: StateInUse, Holders: []Holder{
			{PID: 5, Verdict: Live, Reason: ReasonStarting, RecheckAt: now.Add(3 * time.Second)}}},
			"Opening, or its CLI has just exited: pid 5 is not running here; checked again in 3.0s."},
		{"orphaned", Session{State: StateInUse, Holders: []Holder{orphan}},
			"In use by pid 4242 (copilot), started 10:02, left running after its launcher exited; nobody is attached."},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.Message(now); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestMessageOfAHeldLockWhosePidRunsNowhere(t *testing.T) {
	s := Session{State: StateInUse, Holders: []Holder{{PID: 77, Verdict: Live, Reason: ReasonHoldLocked}}}
	if got := s.Message(time.Now()); got != "In use: its kernel lock is held by a process this machine cannot tie to pid 77, which its lock names." {
		t.Errorf("got %q", got)
	}
}
