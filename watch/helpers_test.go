package watch

// What the tests share: the fake CLI, waiting (until), a recorder that
// applies pushes as the IDE would, and a running watcher (start).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/testbin"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// waitTimeout bounds every wait for an expected notification. Nothing is
// asserted about how fast it arrives; the benchmarks measure that.
const waitTimeout = 10 * time.Second

// nsChildEnv marks the copy of the test binary that runs inside a user
// namespace of its own (limit_linux_test.go).
const nsChildEnv = "WATCH_TEST_USERNS_CHILD"

// fakeCLI is the path of the fake Copilot CLI, built once by TestMain.
var fakeCLI string

func TestMain(m *testing.M) {
	if os.Getenv(nsChildEnv) != "" {
		// A copy of this binary inside a user namespace runs one test
		// that needs no fake CLI.
		os.Exit(m.Run())
	}
	os.Exit(testbin.RunWithFakeCLI(m, &fakeCLI))
}

// until polls cond every few milliseconds until it holds, failing the test
// after waitTimeout with what was awaited and, if dump is not nil, what it
// shows. It is the tests' one way of waiting.
func until(t testing.TB, what string, cond func() bool, dump func() string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			msg := ""
			if dump != nil {
				msg = dump()
			}
			t.Fatalf("never saw %s within %v\n%s", what, waitTimeout, msg)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// recorder applies every Change to a view of the sessions, as the IDE would.
type recorder struct {
	mu      sync.Mutex
	view    map[string]sessionlocks.Session
	changes []Change
}

func newRecorder() *recorder {
	return &recorder{view: map[string]sessionlocks.Session{}}
}

func (r *recorder) notify(c Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range c.Changed {
		r.view[s.ID] = s
	}
	for _, id := range c.Removed {
		delete(r.view, id)
	}
	r.changes = append(r.changes, c)
}

// waitFor waits until pred holds for the view.
func (r *recorder) waitFor(t testing.TB, what string, pred func(view map[string]sessionlocks.Session) bool) {
	t.Helper()
	until(t, "a push: "+what, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return pred(r.view)
	}, r.dump)
}

// waitSession waits until session id is in the view and pred holds for it.
func (r *recorder) waitSession(t testing.TB, id, what string, pred func(s sessionlocks.Session) bool) sessionlocks.Session {
	t.Helper()
	var got sessionlocks.Session
	r.waitFor(t, id+" "+what, func(v map[string]sessionlocks.Session) bool {
		s, ok := v[id]
		got = s
		return ok && pred(s)
	})
	return got
}

func (r *recorder) waitState(t testing.TB, id string, st sessionlocks.State) sessionlocks.Session {
	t.Helper()
	return r.waitSession(t, id, "state "+string(st), func(s sessionlocks.Session) bool { return s.State == st })
}

func (r *recorder) waitRemoved(t testing.TB, id string) {
	t.Helper()
	r.waitFor(t, id+" removed", func(v map[string]sessionlocks.Session) bool {
		_, ok := v[id]
		return !ok && r.sawRemoved(id)
	})
}

func (r *recorder) sawRemoved(id string) bool {
	for _, c := range r.changes {
		if slices.Contains(c.Removed, id) {
			return true
		}
	}
	return false
}

func (r *recorder) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.view[id]
	return ok
}

func (r *recorder) snapshot() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes)
}

func (r *recorder) dump() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	ids := make([]string, 0, len(r.view))
	for id := range r.view {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for i, id := range ids {
		if i == 20 {
			fmt.Fprintf(&b, "  ... and %d more\n", len(ids)-i)
			break
		}
		s := r.view[id]
		fmt.Fprintf(&b, "  %s %s", id, s.State)
		for _, h := range s.Holders {
			fmt.Fprintf(&b, " [pid %d %s %s]", h.PID, h.Verdict, h.Reason)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "  (%d notifications)", len(r.changes))
	return b.String()
}

// fixture is a state dir, an engine on it and a running watcher.
type fixture struct {
	dir string
	e   *sessionlocks.Engine
	w   *Watcher
	rec *recorder
}

type fixtureOpts struct {
	mode   Mode
	settle time.Duration
	setup  func(w *Watcher) // runs before Run: test hooks
}

// newEngine returns an engine on dir with a short settle window, so that the
// fake CLI's locks reach "hold-locked" quickly.
func newEngine(dir string, settle time.Duration) *sessionlocks.Engine {
	if settle == 0 {
		settle = 300 * time.Millisecond
	}
	return sessionlocks.New(sessionlocks.Options{StateDir: dir, Settle: settle})
}

// start runs a watcher on dir and waits until it has its baseline.
func start(t testing.TB, dir string, o fixtureOpts) *fixture {
	t.Helper()
	e := newEngine(dir, o.settle)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	w, err := New(e, Options{Mode: o.mode, PollInterval: 200 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if o.setup != nil {
		o.setup(w)
	}
	f := &fixture{dir: dir, e: e, w: w, rec: newRecorder()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, f.rec.notify) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
		if w.Stats().Watching {
			t.Errorf("Stats.Watching after Run returned")
		}
	})
	select {
	case <-w.Started():
	case err := <-done:
		t.Fatalf("Run returned early: %v", err)
	case <-time.After(waitTimeout):
		t.Fatalf("watcher did not read its baseline within %v", waitTimeout)
	}
	return f
}

// waitStats waits until pred holds for the watcher's stats.
func (f *fixture) waitStats(t testing.TB, what string, pred func(Stats) bool) Stats {
	t.Helper()
	var s Stats
	until(t, "stats showing "+what, func() bool { s = f.w.Stats(); return pred(s) },
		func() string { return fmt.Sprintf("%+v", f.w.Stats()) })
	return s
}

// mkSession creates a session directory with a workspace.yaml.
func mkSession(t testing.TB, dir, id, name string) string {
	t.Helper()
	sd := filepath.Join(dir, id)
	if err := os.MkdirAll(sd, 0o700); err != nil {
		t.Fatal(err)
	}
	// This system's kind of path, absolute: on Windows a POSIX one says WSL
	// wrote it, and one without a drive says nothing.
	ws := fmt.Sprintf("id: %s\ncwd: %s\nclient_name: test\nname: %s\ncreated_at: 2026-11-20T10:00:00.000Z\nupdated_at: 2026-11-20T10:00:00.000Z\n", id, filepath.VolumeName(os.TempDir())+filepath.FromSlash("/tmp/"+id), name)
	if err := os.WriteFile(filepath.Join(sd, "workspace.yaml"), []byte(ws), 0o600); err != nil {
		t.Fatal(err)
	}
	return sd
}

// sessionID makes a UUID-shaped id, as the CLI names its sessions.
func sessionID(n int) string {
	return fmt.Sprintf("0000%04x-1111-4222-8333-%012x", n&0xffff, n)
}

// cli is one fake Copilot CLI holding a session open.
type cli struct {
	cmd   *exec.Cmd
	pid   int
	stdin io.WriteCloser
}

// startCLI runs the fake CLI on session id and waits until its .lock and
// flocked .hold are in place.
func startCLI(t testing.TB, dir, id string, args ...string) *cli {
	t.Helper()
	cmd := exec.Command(fakeCLI, append([]string{"--state-dir", dir, "--session", id}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &cli{cmd: cmd, pid: cmd.Process.Pid, stdin: stdin}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready "+strconv.Itoa(c.pid)+"\n" {
		t.Fatalf("fake CLI: got %q, %v; want ready %d", line, err, c.pid)
	}
	return c
}

// holder returns s's holder for pid, or false.
func holder(s sessionlocks.Session, pid int) (sessionlocks.Holder, bool) {
	for _, h := range s.Holders {
		if h.PID == pid {
			return h, true
		}
	}
	return sessionlocks.Holder{}, false
}

func hasReason(pid int, r ...sessionlocks.Reason) func(sessionlocks.Session) bool {
	return func(s sessionlocks.Session) bool {
		h, ok := holder(s, pid)
		return ok && slices.Contains(r, h.Reason)
	}
}

// modes runs f once per mode.
func modes(t *testing.T, f func(t *testing.T, m Mode)) {
	for _, m := range []Mode{ModeNotify, ModePoll} {
		t.Run(string(m), func(t *testing.T) { f(t, m) })
	}
}
