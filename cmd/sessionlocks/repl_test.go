package main

// The REPL's golden transcripts (testdata/repl) and its log flags.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The REPL's transcript tests feed testdata/repl/NAME.repl to the built
// binary's `repl` on a pipe and compare what it prints with NAME.golden,
// after masking what changes from run to run. A script's first line may be
// "# args: ..." (flags for repl; $STATE is a fresh empty directory).
// go test ./cmd/sessionlocks -run TestREPLTranscripts -update rewrites the golden files.

func init() {
	// Another test file in this package may define -update too.
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// testEnv keeps the REPL away from the user's config and real state dir.
func testEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "HOME", "XDG_CONFIG_HOME", "COPILOT_HOME", "NO_COLOR", "TMPDIR":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"COPILOT_HOME="+filepath.Join(home, ".copilot"), "TMPDIR="+filepath.Join(home, "tmp"))
}

func TestREPLTranscripts(t *testing.T) {
	if runtime.GOOS != "linux" {
		// The demo itself runs there (TestList); the transcripts do not match.
		t.Skip("the transcripts are Linux's: Unix paths, owners proven from /proc, pid 1 readable (the demo's unknown holder)")
	}
	bin := serveBinary(t)
	scripts, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "repl", "*.repl"))
	if len(scripts) == 0 {
		t.Fatal("no scripts in testdata/repl")
	}
	for _, script := range scripts {
		name := strings.TrimSuffix(filepath.Base(script), ".repl")
		t.Run(name, func(t *testing.T) {
			input, err := os.ReadFile(script)
			if err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, "tmp"), 0o700)
			state := filepath.Join(home, "state")
			args := []string{"repl"}
			if first, _, _ := strings.Cut(string(input), "\n"); strings.HasPrefix(first, "# args:") {
				for _, a := range strings.Fields(strings.TrimPrefix(first, "# args:")) {
					args = append(args, strings.ReplaceAll(a, "$STATE", state))
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = testEnv(home)
			cmd.Stdin = bytes.NewReader(input)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err = cmd.Run()
			code := 0
			if err != nil {
				ee, ok := err.(*exec.ExitError)
				if !ok {
					t.Fatal(err)
				}
				code = ee.ExitCode()
			}
			// The server's own log lines (its stderr, which the REPL shows
			// as "serve: ...") depend on timing; they are logged, not compared.
			var out strings.Builder
			for _, l := range strings.SplitAfter(stdout.String(), "\n") {
				if strings.HasPrefix(l, "serve: ") {
					t.Log(strings.TrimSpace(l))
					continue
				}
				out.WriteString(l)
			}
			got := mask(out.String(), home, state, filepath.Dir(bin))
			if stderr.Len() > 0 {
				got += "-- stderr --\n" + mask(stderr.String(), home, state, filepath.Dir(bin))
			}
			got += fmt.Sprintf("-- exit %d --\n", code)

			// The demo cleans up after itself: nothing left in TMPDIR.
			if left, _ := os.ReadDir(filepath.Join(home, "tmp")); len(left) > 0 {
				t.Errorf("the demo left %d entries in TMPDIR, e.g. %s", len(left), left[0].Name())
			}

			checkGolden(t, strings.TrimSuffix(script, ".repl")+".golden", got)
		})
	}
}

// checkGolden compares got with the golden file, or with -update writes it.
func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if updating() {
		os.MkdirAll(filepath.Dir(golden), 0o755)
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("transcript differs from %s (run with -update to accept):\n%s", golden, lineDiff(string(want), got))
	}
}

var masks = []struct {
	re   *regexp.Regexp
	with string
}{
	// Durations the REPL prints after each call.
	{regexp.MustCompile(`\(\d+(\.\d+)?(µs|ms|s)\)`), "(DURATION)"},
	{regexp.MustCompile(`after \d+(\.\d+)?(µs|ms|s)`), "after DURATION"},
	// Times: RFC 3339 and the engine's local "2006-01-02 15:04:05".
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`), "TIME"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?`), "TIME"},
	// Replies carry temporary paths, so their length varies.
	{regexp.MustCompile(`<-- Content-Length: \d+`), "<-- Content-Length: N"},
	// Durations in the engine's sentences.
	// Every form sessionlocks' human() takes: 850ms, 45.3s, 10m, 1h05m, 2d.
	{regexp.MustCompile(`\b-?\d+(\.\d+)?(ms|s|m|h\d\dm|d) ago`), "DURATION ago"},
	// rpc's clock(): 15:04 today, "Jan 2 15:04" (or "Jan 2 2006 15:04")
	// before today, as pid 1's start is on a machine up since yesterday.
	{regexp.MustCompile(`started ([A-Z][a-z]{2} \d{1,2} (\d{4} )?)?\d\d:\d\d`), "started HH:MM"},
	// 10m, or less on a machine booted less than 21 minutes ago (reusedLockAge).
	{regexp.MustCompile(`started -?\d+(\.\d+)?(ms|s|m|h\d\dm|d) after the lock`), "started DURATION after the lock"},
	// The demo's unknown holder is pid 1, whatever it is on this machine.
	{regexp.MustCompile(`((?:pid 1|it) is alive and older than the lock, but ).*( does not look like)`), "${1}CMD$2"},
	{regexp.MustCompile(`pid 1 \([^)]*\)`), "pid 1 (NAME)"},
	{regexp.MustCompile(`"command": ".*"`), `"command": "CMD"`},
	// PIDs: pid 1 is stable, others are not.
	{regexp.MustCompile(`(?i)(pid"?:? |inuse\.|process )\d{2,}`), "${1}PID"},
	// A token names holders by pid and a hash of their files.
	{regexp.MustCompile(`"token": "v1:[^"]+"`), `"token": "TOKEN"`},
	// Counters that depend on timing.
	{regexp.MustCompile(`("uptimeMs"|"hits"|"misses"|"entries"|"events"|"rescans"|"notified"|"processes"|"dirs"): \d+`), "$1: N"},
	{regexp.MustCompile(`("goVersion"|"os"|"arch"|"version"): "[^"]*"`), `$1: "X"`},
	{regexp.MustCompile(`"cached": (true|false)`), `"cached": BOOL`},
}

func mask(s, home, state, bindir string) string {
	s = strings.ReplaceAll(s, bindir, "$BIN")
	s = strings.ReplaceAll(s, state, "$STATE")
	s = regexp.MustCompile(regexp.QuoteMeta(filepath.Join(home, "tmp"))+`/sessionlocks-demo-\d+`).ReplaceAllString(s, "$$DEMO")
	s = strings.ReplaceAll(s, home, "$HOME")
	for _, m := range masks {
		s = m.re.ReplaceAllString(s, m.with)
	}
	return s
}

// lineDiff shows the first lines where want and got differ, with context.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	from := max(0, i-3)
	for j := from; j < i; j++ {
		b.WriteString("  " + w[j] + "\n")
	}
	for j := i; j < min(len(w), i+8); j++ {
		b.WriteString("- " + w[j] + "\n")
	}
	for j := i; j < min(len(g), i+8); j++ {
		b.WriteString("+ " + g[j] + "\n")
	}
	return "line " + strconv.Itoa(i+1) + ":\n" + b.String()
}

// TestREPLLogFlags: repl takes serve's logging flags and passes them on, so
// that the verdicts the server gives show at info (issue 17: repl refused
// --log-level, and nothing logged a verdict).
func TestREPLLogFlags(t *testing.T) {
	bin := serveBinary(t)
	state := t.TempDir()
	e2eSession(t, state, "33333333-aaaa", 2147483000)
	logFile := filepath.Join(t.TempDir(), "serve.log")
	verdict := "msg=canResume session=33333333-aaaa state=stale pid=2147483000 verdict=stale reason=process-exited"
	for _, c := range []struct {
		name    string
		flags   []string
		code    int
		stdout  string // contains
		logFile string // the log file contains
	}{
		{"info shows verdicts", []string{"--log-level", "info"}, 0, "serve: " + `time=`, ""},
		{"the default shows none", nil, 0, "", ""},
		{"to a file", []string{"--log-level", "info", "--log-file", logFile}, 0, "", verdict},
		{"a bad level is a usage error", []string{"--log-level", "loud"}, 2, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			cmd := exec.Command(bin, append([]string{"repl", "--state-dir", state}, c.flags...)...)
			cmd.Env = testEnv(home)
			cmd.Stdin = strings.NewReader("canResume 3333\n")
			out, _ := cmd.CombinedOutput()
			if got := cmd.ProcessState.ExitCode(); got != c.code {
				t.Fatalf("exit %d, want %d:\n%s", got, c.code, out)
			}
			shown := strings.Contains(string(out), verdict)
			if want := c.stdout != ""; shown != want || !strings.Contains(string(out), c.stdout) {
				t.Errorf("verdict shown %v, want %v:\n%s", shown, want, out)
			}
			if c.logFile != "" {
				b, _ := os.ReadFile(logFile)
				if !strings.Contains(string(b), c.logFile) {
					t.Errorf("log file lacks the verdict:\n%s\nrepl's output:\n%s", b, out)
				}
			}
		})
	}
}
