package main

// The 2 a.m. path of issue 17, as a golden transcript of the real binary:
// a state dir with a SIGKILLed CLI's lock, a live CLI and a reused pid (real
// processes: the demo's); `list`, then each id exactly as list printed it
// pasted into `explain` and `call canResume`, then the command explain
// suggests for a stale lock, then `list` again. Every step must work
// (exit 0) and explain itself.
// go test ./cmd/sessionlocks -run TestTwoAM -update rewrites testdata/cli/twoam.golden.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestTwoAM(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the golden text is Linux's: owners are proven from /proc")
	}
	bin := serveBinary(t)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "tmp"), 0o700)
	t.Setenv("TMPDIR", filepath.Join(home, "tmp")) // where startDemo makes its dir, which mask knows
	d, err := startDemo(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer d.cleanup()
	if strings.Contains(strings.Join(d.lines[:3], "\n"), "not set up") {
		t.Skipf("the demo could not set up all three holders:\n%s", d.banner())
	}
	// Only the three the issue names: the unknown holder is pid 1, which
	// differs from machine to machine.
	os.Remove(filepath.Join(d.stateDir, demoSessions[3].id, "inuse.1.lock"))

	var transcript strings.Builder
	step := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--state-dir", d.stateDir)...)
		cmd.Env = testEnv(home)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		out := stdout.String()
		if args[0] == "call" {
			var b bytes.Buffer
			if json.Indent(&b, stdout.Bytes(), "", "  ") == nil {
				out = b.String()
			}
		}
		fmt.Fprintf(&transcript, "$ sessionlocks %s\n%s", strings.Join(args, " "), out)
		if stderr.Len() > 0 || err != nil {
			fmt.Fprintf(&transcript, "-- stderr --\n%s[%v]\n", stderr.String(), err)
			t.Errorf("sessionlocks %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		transcript.WriteString("\n")
		return stdout.String()
	}

	list := step("list")
	var ids []string
	for _, l := range strings.Split(list, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(l, "(") {
			ids = append(ids, f[0])
		}
	}
	if len(ids) != 3 {
		t.Fatalf("list printed %d sessions, want 3:\n%s", len(ids), list)
	}
	var suggested []string
	for _, id := range ids {
		x := step("explain", id)
		step("call", "canResume", id)
		// Explain names the command that would remove a stale lock: run it.
		if m := regexp.MustCompile("`sessionlocks (call reclaimStale [^`]+)` would remove it").FindStringSubmatch(x); m != nil {
			suggested = append(suggested, m[1])
		}
	}
	if len(suggested) != 2 {
		t.Fatalf("explain suggested reclaimStale for %d sessions, want 2 (the SIGKILLed CLI's and the reused pid's)", len(suggested))
	}
	for _, s := range suggested {
		step(strings.Fields(s)...)
	}
	step("list")

	got := twoAMMask(transcript.String(), home, d.stateDir, filepath.Dir(bin))
	checkGolden(t, filepath.Join("..", "..", "testdata", "cli", "twoam.golden"), got)
}

// twoAMMask is the REPL transcripts' mask, and: the reused pid is this test
// process, whose command line is go test's; tables and explanations are
// aligned on widths that masking changes.
func twoAMMask(s, home, state, bindir string) string {
	s = regexp.MustCompile(regexp.QuoteMeta(os.Args[0])+`[^,")\n]*`).ReplaceAllString(s, "TESTPROC")
	s = regexp.MustCompile(`_fakecli [^\n"]*`).ReplaceAllString(s, "_fakecli ARGS") // clipped where path lengths say
	s = mask(s, home, state, bindir)
	s = regexp.MustCompile(`((?:inUse|stale|unknown)!?) +[\d,]+ `).ReplaceAllString(s, "$1  PIDS ") // list's HOLDERS
	s = regexp.MustCompile(`(\S) {2,}`).ReplaceAllString(s, "$1  ")
	return s
}
