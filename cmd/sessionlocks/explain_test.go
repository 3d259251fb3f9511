package main

// explain's answers other than the 2 a.m. path (twoam_test.go): its JSON,
// and the ids and state dirs that name no one session.

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	bin := serveBinary(t)
	state := t.TempDir()
	const stale, other = "33333333-aaaa-4bbb-8ccc-000000000001", "33334444-aaaa-4bbb-8ccc-000000000002"
	e2eSession(t, state, stale, 2147483000)
	e2eSession(t, state, other)

	t.Run("json", func(t *testing.T) {
		stdout, stderr, code := runBin(t, bin, "", "explain", "--json", "--state-dir", state, "33333333")
		var x explanation
		if code != 0 || json.Unmarshal([]byte(stdout), &x) != nil {
			t.Fatalf("exit %d: %s %s", code, stdout, stderr)
		}
		if x.Session.ID != stale || !x.CanResume || !x.StateDirExists || len(x.Holders) != 1 {
			t.Fatalf("got %+v", x)
		}
		h, wire := x.Holders[0], x.Session.Holders[0]
		if wire.PID != 2147483000 || wire.Verdict != "stale" || wire.Reason != "process-exited" || h.Hold != "none" ||
			!strings.Contains(wire.Detail, "is not running") || !strings.Contains(h.Action, "sessionlocks call reclaimStale "+stale) {
			t.Errorf("holder %+v, %+v", h, wire)
		}
	})

	for _, c := range []struct {
		name, dir string
		args      []string
		code      int
		stderr    string
	}{
		{"ambiguous prefix lists the candidates", state, []string{"3333"}, 1, "matches 2 sessions: " + stale + ", " + other},
		{"unknown id points at list", state, []string{"ffff"}, 1, "sessionlocks list --all lists the sessions there"},
		{"missing state dir says so", filepath.Join(state, "typo"), []string{"3333"}, 1, "the state directory " + filepath.Join(state, "typo") + " does not exist: check --state-dir, and COPILOT_HOME"},
		{"no id", state, nil, 2, "want one session id"},
		{"dot-name is no id", state, []string{".session-operation-locks"}, 1, "invalid session id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runBin(t, bin, "", append([]string{"explain", "--state-dir", c.dir}, c.args...)...)
			if code != c.code || !strings.Contains(stderr, c.stderr) || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d saying %q", code, stdout, stderr, c.code, c.stderr)
			}
		})
	}
}
