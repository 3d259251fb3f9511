package rpc

// The verdicts the server gives are in its log at info, bounded.

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/copilot-ide/sessionlocks/internal/syncbuf"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
	"github.com/copilot-ide/sessionlocks/watch"
)

func logTo(b *syncbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// TestCanResumeLogsItsVerdicts: issue 17, "nothing in the logs says why a
// session was refused"; canResume logged nothing at info.
func TestCanResumeLogsItsVerdicts(t *testing.T) {
	many := make([]int, 50)
	for i := range many {
		many[i] = deadPID + i
	}
	for _, c := range []struct {
		name      string
		pids      []int
		wantLines int
		want      []string
	}{
		{"one holder", []int{deadPID}, 1, []string{"msg=canResume", "session=s", "state=stale", fmt.Sprintf("pid=%d", deadPID), "verdict=stale", "reason=process-exited"}},
		{"no holders", nil, 1, []string{"session=s", "state=free"}},
		{"many holders, bounded", many, maxLoggedHolders + 1, []string{"moreHolders=45", `listedVerdicts="stale=50"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSession(t, dir, "s", c.pids)
			var logs syncbuf.Buffer
			cl := connect(t, Options{Engine: engineFor(dir), Logger: logTo(&logs)}, ClientOptions{})
			if err := cl.Call(context.Background(), MethodCanResume, map[string]string{"sessionId": "s"}, nil); err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(string(logs.Bytes())), "\n") {
				if strings.Contains(l, "msg=canResume") {
					lines = append(lines, l)
				}
			}
			if len(lines) != c.wantLines {
				t.Fatalf("%d canResume lines, want %d:\n%s", len(lines), c.wantLines, logs.Bytes())
			}
			all := strings.Join(lines, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("log lacks %q:\n%s", w, all)
				}
			}
		})
	}
}

// TestVerdictLogChanges: a session's verdicts are logged when they change,
// not on every change of its metadata, and a change of many sessions is
// bounded.
func TestVerdictLogChanges(t *testing.T) {
	session := func(id string, v sessionlocks.Verdict, r sessionlocks.Reason) sessionlocks.Session {
		st := sessionlocks.StateStale
		if v == sessionlocks.Live {
			st = sessionlocks.StateInUse
		}
		return sessionlocks.Session{ID: id, State: st, Holders: []sessionlocks.Holder{{SessionID: id, PID: 42, Verdict: v, Reason: r}}}
	}
	var logs syncbuf.Buffer
	vl := verdictLog{log: logTo(&logs), seen: map[string]string{}}
	count := func() int { return strings.Count(string(logs.Bytes()), "\n") }
	for _, step := range []struct {
		name   string
		change watch.Change
		lines  int // logged by this step
	}{
		{"first seen", watch.Change{Changed: []sessionlocks.Session{session("a", sessionlocks.Live, sessionlocks.ReasonHoldLocked)}}, 1},
		{"metadata only", watch.Change{Changed: []sessionlocks.Session{session("a", sessionlocks.Live, sessionlocks.ReasonHoldLocked)}}, 0},
		{"the CLI was killed", watch.Change{Changed: []sessionlocks.Session{session("a", sessionlocks.Stale, sessionlocks.ReasonHoldReleased)}}, 1},
		{"removed, then back", watch.Change{Removed: []string{"a"}}, 0},
		{"back", watch.Change{Changed: []sessionlocks.Session{session("a", sessionlocks.Stale, sessionlocks.ReasonHoldReleased)}}, 1},
		{"many sessions at once", func() watch.Change {
			var c watch.Change
			for i := range 500 {
				c.Changed = append(c.Changed, session(fmt.Sprint("m", i), sessionlocks.Stale, sessionlocks.ReasonProcessExited))
			}
			return c
		}(), maxLoggedSessions + 1},
	} {
		t.Run(step.name, func(t *testing.T) {
			before := count()
			vl.change(step.change)
			if got := count() - before; got != step.lines {
				t.Errorf("logged %d lines, want %d:\n%s", got, step.lines, logs.Bytes())
			}
		})
	}
	if !strings.Contains(string(logs.Bytes()), `msg="verdict changed" session=a state=stale pid=42 verdict=stale reason=hold-released`) {
		t.Errorf("no line says session a went stale:\n%s", logs.Bytes())
	}
}
