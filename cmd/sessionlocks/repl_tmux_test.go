//go:build unix

package main

// The REPL in a real terminal (tmux): completion, and output arriving mid-line.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestREPLTerminal drives the REPL in a real terminal, tmux's, to check what
// only a terminal shows: Tab completing a method name, and a notification
// arriving while a line is half typed, printed above the prompt with the
// half-typed line redrawn intact.
func TestREPLTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	dir := t.TempDir()
	bin := serveBinary(t)
	home := filepath.Join(dir, "home")
	state := filepath.Join(dir, "state")
	const id = "a1b2c3d4-0000-4000-8000-000000000001"
	if err := writeWorkspace(state, id, "terminal test", "/src", time.Now().Add(-time.Hour), time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}

	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	env := testEnv(home)
	var shell strings.Builder
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == "HOME" || k == "XDG_CONFIG_HOME" || k == "COPILOT_HOME" || k == "PATH" {
			fmt.Fprintf(&shell, "%s=%q ", k, v)
		}
	}
	fmt.Fprintf(&shell, "NO_COLOR=1 %q repl --state-dir %q; echo REPL-EXIT-$?; sleep 30", bin, state)
	tmux("-f", "/dev/null", "new-session", "-d", "-s", "repl", "-x", "120", "-y", "40", "sh", "-c", shell.String())
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })

	screen := func() string { return tmux("capture-pane", "-p", "-t", "repl") }
	waitFor := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			s := screen()
			if ok(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	lastLine := func(s string) string {
		lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
		return strings.TrimRight(lines[len(lines)-1], " ")
	}

	waitFor("the prompt", func(s string) bool { return lastLine(s) == "sessionlocks>" })

	// Tab completes a method name.
	tmux("send-keys", "-t", "repl", "canRe", "Tab")
	waitFor("canResume completed", func(s string) bool { return lastLine(s) == "sessionlocks> canResume" })

	// Half type an argument, then make a lock appear: the watcher's
	// sessionsChanged must show above the prompt, the line stay as typed.
	tmux("send-keys", "-t", "repl", " a1b2")
	waitFor("the half-typed line", func(s string) bool { return lastLine(s) == "sessionlocks> canResume a1b2" })
	lock := filepath.Join(state, id, "inuse.999999.lock")
	if err := os.WriteFile(lock, []byte("999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := waitFor("the notification", func(s string) bool { return strings.Contains(s, "<- notification sessionsChanged") })
	s = waitFor("the redrawn line", func(s string) bool { return lastLine(s) == "sessionlocks> canResume a1b2" })
	if strings.Contains(s, "a1b2<- notification") {
		t.Errorf("the notification was printed into the typed line:\n%s", s)
	}

	// Finish the line: the prefix resolves to the full id.
	tmux("send-keys", "-t", "repl", "Enter")
	waitFor("canResume's answer", func(s string) bool {
		return strings.Contains(s, `"sessionId": "`+id+`"`) && lastLine(s) == "sessionlocks>"
	})

	// Ctrl-D quits, and the line typed is in the history file.
	tmux("send-keys", "-t", "repl", "C-d")
	waitFor("the exit", func(s string) bool { return strings.Contains(s, "REPL-EXIT-0") })
	hist, err := os.ReadFile(filepath.Join(home, ".config", "sessionlocks", "history"))
	if err != nil || !strings.Contains(string(hist), "canResume a1b2") {
		t.Errorf("history file: %v %q", err, hist)
	}
}
