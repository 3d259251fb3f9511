package main

// `call` takes a session id (or a unique prefix) in the REPL's three forms,
// and a bad argument's error says what to type instead. Issue 17: `list`
// printed 33333333 and `call canResume` refused it three ways.

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBin runs the binary and returns its stdout, stderr and exit code.
func runBin(t *testing.T, bin, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return stdout.String(), stderr.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

func TestCallForms(t *testing.T) {
	bin := serveBinary(t)
	state := t.TempDir()
	const stale, other = "33333333-aaaa-4bbb-8ccc-000000000001", "33334444-aaaa-4bbb-8ccc-000000000002"
	e2eSession(t, state, stale, 2147483000) // a crashed CLI's lock
	e2eSession(t, state, other)

	for _, c := range []struct {
		name    string
		args    []string
		stdin   string
		code    int
		session string // the answer's sessionId, for a success
		stderr  string // what the error says, for a failure
	}{
		{"bare prefix, as list prints it", []string{"canResume", "33333333"}, "", 0, stale, ""},
		{"key=value prefix", []string{"canResume", "sessionId=33333333"}, "", 0, stale, ""},
		{"JSON prefix", []string{"canResume", `{"sessionId":"33333333"}`}, "", 0, stale, ""},
		{"JSON from stdin", []string{"canResume", "-"}, `{"sessionId":"33334"}`, 0, other, ""},
		{"full id", []string{"canResume", stale}, "", 0, stale, ""},
		{"flags after the params", []string{"canResume", "33333333", "--log-level", "error"}, "", 0, stale, ""},
		{"ambiguous prefix lists the candidates", []string{"canResume", "3333"}, "", 1, "",
			`matches 2 sessions: ` + stale + `, ` + other + `; type more of the id`},
		{"unknown id points at list", []string{"canResume", "ffff"}, "", 1, "", "sessionlocks list --all lists the sessions"},
		{"two bare arguments", []string{"canResume", "3333", "4444"}, "", 2, "", "give the others as key=value"},
		{"no such parameter", []string{"canResume", "id=3333"}, "", 2, "", `canResume has no parameter "id" (it takes sessionId)`},
		{"bad JSON says the other forms", []string{"canResume", `{"sessionId":`}, "", 2, "", "type canResume <id prefix> or canResume sessionId=<id prefix>"},
		{"stdin must be JSON", []string{"canResume", "-"}, "sessionId=3333", 2, "", "give key=value on the command line instead"},
		{"no method", nil, "", 2, "", "which method?"},
		{"unknown method with a bare argument", []string{"canResum", "3333"}, "", 2, "", `unknown method "canResum" (did you mean canResume?)`}, // issue 26
		{"unknown method", []string{"canResum"}, "", 1, "", `method "canResum" not found (did you mean "canResume"?)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runBin(t, bin, c.stdin, append([]string{"call", "--state-dir", state}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, c.code, stdout, stderr)
			}
			if c.code != 0 {
				if !strings.Contains(stderr, c.stderr) {
					t.Errorf("stderr %q, want it to say %q", stderr, c.stderr)
				}
				return
			}
			var r struct{ SessionID string }
			if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.SessionID != c.session {
				t.Errorf("answer %s (%v), want sessionId %s", stdout, err, c.session)
			}
		})
	}

	t.Run("reclaimStale by prefix removes only that session's stale lock", func(t *testing.T) {
		stdout, stderr, code := runBin(t, bin, "", "call", "--state-dir", state, "reclaimStale", "33333333")
		if code != 0 || !strings.Contains(stdout, `"reclaimed":1`) {
			t.Fatalf("exit %d: %s %s", code, stdout, stderr)
		}
	})

	t.Run("status says whether the state dir exists", func(t *testing.T) {
		for dir, want := range map[string]bool{state: true, filepath.Join(state, "missing"): false} {
			stdout, stderr, code := runBin(t, bin, "", "call", "--state-dir", dir, "status")
			var st struct {
				StateDirExists *bool `json:"stateDirExists"`
			}
			if code != 0 || json.Unmarshal([]byte(stdout), &st) != nil || st.StateDirExists == nil || *st.StateDirExists != want {
				t.Errorf("status on %s: %s %s, want stateDirExists %v", dir, stdout, stderr, want)
			}
		}
	})
}
