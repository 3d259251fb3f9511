//go:build realcli && linux

// The conformance tests: the real Copilot CLI, run offline, and the sidecar
// spawned as the IDE spawns it. `make test-realcli` runs them; plain
// `go test ./...` does not (build tag realcli).

package realcli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/realcli"
	"github.com/copilot-ide/sessionlocks/internal/testbin"
)

var (
	cliBinary     string // the real copilot
	sidecarBinary string // sessionlocks
	runtimeCache  string // XDG_CACHE_HOME shared by every CLI run
)

// waitLong bounds every wait for an event: generous, because a loaded CI
// machine is slow, and never an assertion about speed.
const waitLong = 90 * time.Second

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	// The layout fixture records permissions; make them not depend on the caller.
	syscall.Umask(0o022)
	ctx := context.Background()
	in, err := realcli.Ensure(ctx, os.Stderr)
	if errors.Is(err, realcli.ErrUnavailable) {
		fmt.Printf("SKIP: real Copilot CLI %s conformance tests: %v\n", realcli.Version, err)
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "realcli:", err)
		return 1
	}
	cliBinary = in.Binary
	// Beside our install, so that the 235 MB runtime the CLI unpacks on
	// first use is unpacked once per machine, not once per test; for a
	// binary named by SESSIONLOCKS_REALCLI, once per run.
	runtimeCache = filepath.Join(in.Dir, "xdg-cache")
	if os.Getenv(realcli.EnvBinary) != "" {
		dir, err := os.MkdirTemp("", "realcli-xdg-cache-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		runtimeCache = dir
	}

	sidecarBinary = os.Getenv("SESSIONLOCKS_BINARY")
	if sidecarBinary == "" {
		dir, err := os.MkdirTemp("", "realcli-sidecar-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		if sidecarBinary, err = testbin.Sidecar(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// newEnv gives a test its own HOME, working directory and provider.
func newEnv(t *testing.T) *realcli.Env {
	t.Helper()
	env, _ := newEnvProvider(t)
	return env
}

func newEnvProvider(t *testing.T) (*realcli.Env, *realcli.Provider) {
	t.Helper()
	prov, err := realcli.StartProvider()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prov.Close() })
	root := t.TempDir()
	env := &realcli.Env{
		Binary:      cliBinary,
		Home:        filepath.Join(root, "home"),
		CacheHome:   runtimeCache,
		Workdir:     filepath.Join(root, "project"),
		ProviderURL: prov.URL(),
	}
	for _, d := range []string{env.Home, env.Workdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	providers[env] = prov
	return env, prov
}

// providers finds an Env's provider; tests run one at a time.
var providers = map[*realcli.Env]*realcli.Provider{}

func ctxLong(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	t.Cleanup(cancel)
	return ctx
}

// startCLI runs `copilot -p PROMPT --allow-all-tools extra...` and waits for
// its lock and flocked hold. The CLI's process group is killed at cleanup.
func startCLI(t *testing.T, env *realcli.Env, sessionID, prompt string, extra ...string) (*realcli.Proc, realcli.Holder) {
	t.Helper()
	prov := providers[env]
	asked := prov.Accepted()
	p, err := env.Prompt(prompt, extra...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	ctx := ctxLong(t)
	h, err := env.WaitHolder(ctx, p, sessionID)
	if err != nil {
		t.Fatalf("%v\n%s", err, cliLog(env, p.PID))
	}
	// Locked is not yet resumable: events.jsonl comes ~0.5 s later, and a
	// session killed before it exists cannot be resumed ("No session ...
	// matched"). Once the CLI has written its first event and asked the
	// provider, the session is fully open.
	events := filepath.Join(filepath.Dir(h.Lock), "events.jsonl")
	for prov.Accepted() == asked || !nonEmpty(events) {
		if done, _ := p.Exited(); done {
			t.Fatalf("copilot pid %d exited before asking the model; output:\n%s\n%s", p.PID, p.Output(), cliLog(env, p.PID))
		}
		if ctx.Err() != nil {
			t.Fatalf("copilot pid %d never asked the model provider; output:\n%s\n%s", p.PID, p.Output(), cliLog(env, p.PID))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("copilot pid %d holds session %s", p.PID, h.SessionID)
	return p, h
}

// newSession gives a test its own Env and a CLI holding a new session.
func newSession(t *testing.T) (*realcli.Env, string, *realcli.Proc, realcli.Holder) {
	t.Helper()
	env := newEnv(t)
	id := newSessionID(t)
	p, h := startCLI(t, env, id, "hi", "--session-id="+id)
	return env, id, p, h
}

// newSessionID makes a fresh UUID for --session-id, so a test knows its
// session's directory before the CLI creates it.
func newSessionID(t *testing.T) string {
	b, err := os.ReadFile("/proc/sys/kernel/random/uuid")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// resumeEvent is the CLI's own record of opening a session again. Its
// alreadyInUse is what the CLI concluded from the locks it found: true is
// what, interactively, shows the "Session in use" dialog.
type resumeEvent struct {
	Type string `json:"type"`
	Data struct {
		AlreadyInUse     *bool `json:"alreadyInUse"`
		SessionWasActive *bool `json:"sessionWasActive"`
	} `json:"data"`
}

// resumes returns the session.resume events in a session's events.jsonl.
func resumes(t *testing.T, sessionDir string) []resumeEvent {
	t.Helper()
	f, err := os.Open(filepath.Join(sessionDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []resumeEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev resumeEvent
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "session.resume" {
			out = append(out, ev)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// resumeCLI resumes a session non-interactively and reports whether the CLI
// thought it already in use, and who had the pids of the locks it found
// while it started (see wantNotInUse). It waits for the CLI to lock the
// session and for the session.resume event that follows.
func resumeCLI(t *testing.T, env *realcli.Env, id string) (*realcli.Proc, realcli.Holder, bool, []realcli.PIDReport) {
	t.Helper()
	before := len(resumes(t, env.SessionDir(id)))
	watches := watchLocks(env.SessionDir(id), nil)
	defer stopAll(watches)
	p, h := startCLI(t, env, id, "resume check", "--resume="+id)
	ev, ok := waitResumeEvent(t, env, id, before)
	pids := stopAll(watches)
	if !ok {
		t.Fatalf("copilot pid %d locked session %s but wrote no session.resume event; output:\n%s\n%s", p.PID, id, p.Output(), cliLog(env, p.PID))
	}
	if ev.Data.AlreadyInUse == nil {
		t.Fatalf("session.resume event without alreadyInUse: the CLI's events changed")
	}
	return p, h, *ev.Data.AlreadyInUse, pids
}

// waitResumeEvent waits for a session.resume event after the first before ones.
func waitResumeEvent(t *testing.T, env *realcli.Env, id string, before int) (resumeEvent, bool) {
	t.Helper()
	ctx := ctxLong(t)
	for {
		if evs := resumes(t, env.SessionDir(id)); len(evs) > before {
			return evs[len(evs)-1], true
		}
		select {
		case <-ctx.Done():
			return resumeEvent{}, false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// killCLI SIGKILLs a CLI's process group, as a crash or `kill -9` would, and
// checks that it left its lock and hold behind (no longer flocked).
func killCLI(t *testing.T, p *realcli.Proc, h realcli.Holder) {
	t.Helper()
	p.Kill()
	for _, f := range []string{h.Lock, h.Hold} {
		if _, err := os.Lstat(f); err != nil {
			t.Fatalf("after SIGKILL, %s: %v (the CLI was expected to leave it behind)", f, err)
		}
	}
	if held, err := realcli.HoldLocked(h.Hold); err != nil || held {
		t.Fatalf("after SIGKILL, %s still flocked=%v (%v)", h.Hold, held, err)
	}
}

// cliLog is the CLI's own log for pid ($HOME/.copilot/logs/process-<ms>-<pid>.log,
// the newest if a reused pid wrote two), labelled for a failure message.
func cliLog(env *realcli.Env, pid int) string {
	files, _ := filepath.Glob(filepath.Join(env.Home, ".copilot", "logs", fmt.Sprintf("process-*-%d.log", pid)))
	if len(files) == 0 {
		return fmt.Sprintf("--- copilot pid %d's own log: none in %s ---", pid, filepath.Join(env.Home, ".copilot", "logs"))
	}
	sort.Strings(files) // the same number of digits in <ms> until 2286
	f := files[len(files)-1]
	b, err := os.ReadFile(f)
	if err != nil {
		return fmt.Sprintf("--- copilot pid %d's own log: %v ---", pid, err)
	}
	return fmt.Sprintf("--- copilot pid %d's own log (%s) ---\n%s", pid, f, headTail(string(b), 40))
}

func nonEmpty(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > 0
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
