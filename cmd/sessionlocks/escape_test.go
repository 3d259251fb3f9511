//go:build unix

package main

// Nothing from the disk or another process reaches a terminal raw (issue 23
// item 5): session names and cwds from workspace.yaml, state dir and lock
// paths, the command lines of the processes a lock names and of their
// launchers, and input echoed in errors, through list, explain, call and
// the REPL. (Unix: these names are not file names Windows allows.)

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// hostile is what a pasted prompt or a process's argv can hold: a title
// change, a screen clear, a C1 CSI, a bidi override, a zero-width space
// and a line break.
const hostile = "\x1b]0;pwned\x07\x1b[2J\u009b31m\u202etxt.exe\u200b\nline2"

// rawHidden returns the characters in s that a terminal acts on or does
// not show, other than line breaks and tabs (flag's usage indents with
// them; hostile holds none), or "" if there are none.
func rawHidden(s string) string {
	var bad []string
	for _, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			bad = append(bad, fmt.Sprintf("%U", r))
		}
	}
	return strings.Join(bad, " ")
}

// hostileWorld is a state dir under a hostile path holding a session with
// a hostile name and cwd and a stale lock, and one held by a live fake CLI
// whose argv (its own path) and whose launcher's argv hold escapes.
type hostileWorld struct {
	bin, state    string
	stale, live   string // session ids
	livePID       int
	cliPath       string // the fake CLI's argv[0]
	launcherArgv0 string
}

func newHostileWorld(t *testing.T) *hostileWorld {
	t.Helper()
	w := &hostileWorld{
		bin:   serveBinary(t),
		stale: "5a1e0000-0000-4000-8000-000000000001",
		live:  "11fe0000-0000-4000-8000-000000000002",
	}
	root := filepath.Join(t.TempDir(), "home"+hostile)
	w.state = filepath.Join(root, "session-state")
	for _, id := range []string{w.stale, w.live} {
		if err := os.MkdirAll(filepath.Join(w.state, id), 0o700); err != nil {
			t.Fatal(err)
		}
		// Quoted as YAML does: Go's escapes are YAML's.
		ws := fmt.Sprintf("id: %s\ncwd: %q\nname: %q\ncreated_at: 2026-01-01T10:00:00.000Z\nupdated_at: 2026-01-02T10:00:00.000Z\n",
			id, "/src/"+hostile, "fix "+hostile)
		if err := os.WriteFile(filepath.Join(w.state, id, "workspace.yaml"), []byte(ws), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.state, w.stale, "inuse.2147483000.lock"), []byte("2147483000\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// The fake CLI runs from a path with escapes in it, started by a shell
	// whose argv[0] holds them too (so its launcher's command does).
	w.cliPath = filepath.Join(root, "bin"+hostile, "copilot"+hostile)
	if err := os.MkdirAll(filepath.Dir(w.cliPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(w.bin, w.cliPath); err != nil {
		t.Fatal(err)
	}
	w.launcherArgv0 = "sh" + hostile
	sh := &exec.Cmd{Path: "/bin/sh", Args: []string{w.launcherArgv0, "-c",
		`"$1" _fakecli --state-dir "$2" --session "$3" --exit-on-eof; true`, "sh", w.cliPath, w.state, w.live}}
	stdin, _ := sh.StdinPipe()
	stdout, _ := sh.StdoutPipe()
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); sh.Process.Kill(); sh.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if _, err2 := fmt.Sscanf(line, "ready %d", &w.livePID); err != nil || err2 != nil {
		t.Fatalf("fake CLI: %q %v", line, err)
	}
	return w
}

func (w *hostileWorld) run(t *testing.T, stdin string, args ...string) (string, string) {
	t.Helper()
	stdout, stderr, _ := runBin(t, w.bin, stdin, args...)
	return stdout, stderr
}

func TestEscapeCLI(t *testing.T) {
	w := newHostileWorld(t)
	check := func(name, out string) {
		t.Helper()
		if bad := rawHidden(out); bad != "" {
			t.Errorf("%s prints %s raw:\n%s", name, bad, out)
		}
	}
	for _, args := range [][]string{
		{"list"}, {"list", "--all"}, {"list", "--wide"}, {"list", "--json"},
		{"explain", w.stale}, {"explain", w.live}, {"explain", "--json", w.live},
		{"call", "canResume", w.live}, {"call", "listSessions"}, {"call", "forceResume", w.live, "expect=" + hostile},
		{"explain", hostile}, {"call", "canResume", hostile}, {"call", "canResume", "sessionId=" + hostile, "x=1"},
		{"call", hostile}, {"list", "--" + hostile}, {"explain", "--state-dir", w.state + hostile, "5a1e"},
	} {
		args = append(args, "--state-dir", w.state)
		stdout, stderr := w.run(t, "", args...)
		name := strings.Join(args[:min(2, len(args))], " ")
		check(name+" (stdout)", stdout)
		check(name+" (stderr)", stderr)
	}

	// What was escaped is still there to read, Go-quoted.
	explained, _ := w.run(t, "", "explain", w.live, "--state-dir", w.state)
	for _, want := range []string{`fix \x1b]0;pwned\a\x1b[2J\u009b31m\u202etxt.exe\u200b line2`, `/src/\x1b]0;pwned`,
		`copilot\x1b]0;pwned\a`, `sh\x1b]0;pwned`, `home\x1b]0;pwned`} {
		if !strings.Contains(explained, want) {
			t.Errorf("explain lacks %s:\n%s", want, explained)
		}
	}

	// JSON stays JSON, and means what it meant.
	out, _ := w.run(t, "", "call", "canResume", w.live, "--state-dir", w.state)
	var cr struct {
		Holders []struct {
			Process  struct{ Command string }
			Launcher *struct{ Command string }
		}
	}
	if err := json.Unmarshal([]byte(out), &cr); err != nil || len(cr.Holders) != 1 {
		t.Fatalf("call canResume: %v\n%s", err, out)
	}
	if h := cr.Holders[0]; !strings.HasPrefix(h.Process.Command, w.cliPath+" _fakecli") || h.Launcher == nil || !strings.HasPrefix(h.Launcher.Command, w.launcherArgv0) {
		t.Errorf("the command lines changed on the way: %q, launcher %+v", h.Process.Command, h.Launcher)
	}

	// The table's columns line up by the characters shown.
	table, _ := w.run(t, "", "list", "--state-dir", w.state)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	col := func(l, word string) int { return utf8.RuneCountInString(l[:strings.Index(l, word)]) }
	want := col(lines[0], "STATE")
	for _, l := range lines[1:3] {
		state := "inUse"
		if strings.Contains(l, "stale") {
			state = "stale"
		}
		if got := col(l, state); got != want {
			t.Errorf("STATE at column %d, %s at %d:\n%s", want, state, got, table)
		}
	}
}

func TestEscapeREPL(t *testing.T) {
	w := newHostileWorld(t)
	script := strings.Join([]string{
		"listSessions",
		"canResume " + w.live[:4],
		".trace on",
		"canResume " + w.stale[:4],
		".trace off",
		`canResume "` + strings.ReplaceAll(hostile, "\n", `\n`) + `"`,
		"noSuchMethod\x1b]0;t\x07", // no '[': it would open a JSON array
		".help \x1b]0;t\x07",
		"reclaimStale " + w.stale[:4],
		".wait 2s",
	}, "\n") + "\n"
	stdout, stderr := w.run(t, script, "repl", "--state-dir", w.state, "--log-level", "debug")
	for name, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
		if bad := rawHidden(out); bad != "" {
			t.Errorf("repl's %s has %s raw:\n%s", name, bad, out)
		}
	}
	for _, want := range []string{`fix \u001b]0;pwned\u0007\u001b[2J\u009b31m\u202etxt.exe\u200b\nline2`, "<- notification sessionsChanged", "--> "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("repl's output lacks %s:\n%s", want, stdout)
		}
	}
}
