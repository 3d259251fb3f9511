package sessionlocks

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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/testbin"
)

// fakeCLI is the path of the fake Copilot CLI built once for all tests, under
// the CLI's own name so that its argv looks like the real one's.
var fakeCLI string

func TestMain(m *testing.M) {
	if os.Getenv(nsHelperEnv) != "" {
		os.Exit(runNamespaceHelper())
	}
	if name := os.Getenv(helperEnv); name != "" {
		f := helpers[name]
		if f == nil {
			fmt.Fprintln(os.Stderr, "no test helper", name)
			os.Exit(2)
		}
		os.Exit(f())
	}
	os.Exit(testbin.RunWithFakeCLI(m, &fakeCLI))
}

// helperEnv names a role the test binary plays when re-executed (see
// helperCmd): a sidecar whose parent is the test, pid 1 of a PID namespace.
const helperEnv = "SESSIONLOCKS_TEST_HELPER"

// helpers are the roles, by name; test files add theirs in init. The two
// here stand in for sleep(1) and true(1), which Windows does not have.
var helpers = map[string]func() int{
	"sleeper": func() int { time.Sleep(10 * time.Minute); return 0 },
	"exit":    func() int { return 0 },
}

// helperCmd is the test binary re-executed as helper name, with env added;
// prefix (unshare ...) runs it inside another command.
func helperCmd(name string, env []string, prefix ...string) *exec.Cmd {
	args := append(prefix, os.Args[0])
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(append(os.Environ(), helperEnv+"="+name, "SESSIONLOCKS_TEST_CLI="+fakeCLI), env...)
	return cmd
}

// quiet discards the engine's logs in tests.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// holder is a running fake CLI holding a session open.
type holder struct {
	cmd *exec.Cmd
	pid int
}

// startHolder runs the fake CLI on a session and waits until its locks are in
// place. The process is killed and reaped when the test ends.
func startHolder(t testing.TB, stateDir, id string, args ...string) *holder {
	t.Helper()
	cmd := exec.Command(fakeCLI, append([]string{"--state-dir", stateDir, "--session", id}, args...)...)
	h := &holder{cmd: cmd}
	line := startReady(t, cmd, func() { h.kill(); h.reap() })
	if !strings.HasPrefix(line, "ready ") {
		t.Fatalf("fake CLI did not get ready: %q", line)
	}
	h.pid = cmd.Process.Pid
	return h
}

// startReady starts cmd, stopped by stop when the test ends, and returns
// the first line it prints: a fake CLI's "ready <pid>" once its locks are
// in place.
func startReady(t testing.TB, cmd *exec.Cmd, stop func()) string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %q %v", cmd.Path, line, err)
	}
	return line
}

// kill is SIGKILL (on Windows TerminateProcess): no chance to clean up.
func (h *holder) kill() { h.cmd.Process.Kill() }

// killNoReap SIGKILLs the holder and waits until it is a zombie, leaving it
// unreaped (on Windows: exited, its pid kept by this process's handle).
func (h *holder) killNoReap(t testing.TB) {
	h.kill()
	waitFor(t, "holder to become a zombie", func() bool {
		return readProc(h.pid).state == procZombie
	})
}

func (h *holder) reap() {
	if h.cmd.ProcessState == nil {
		h.cmd.Wait()
	}
}

// killAndReap SIGKILLs the holder and waits until it is gone.
func (h *holder) killAndReap() { h.kill(); h.reap() }

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// newSession makes a session directory with a workspace.yaml.
func newSession(t testing.TB, stateDir, id string) string {
	t.Helper()
	dir := filepath.Join(stateDir, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// This system's kind of path, absolute: on Windows a POSIX one says WSL
	// wrote it, and one without a drive says nothing.
	yaml := fmt.Sprintf("id: %s\ncwd: %s\nclient_name: cli\nname: Session %s\nuser_named: false\nsummary_count: 0\nfork_count: 0\ncreated_at: 2026-11-20T10:00:00.000Z\nupdated_at: 2026-11-21T10:00:00.000Z\n", id, filepath.VolumeName(os.TempDir())+filepath.FromSlash("/home/dev/"+id), id)
	if err := os.WriteFile(filepath.Join(dir, "workspace.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeLock plants inuse.<pid>.lock with the given mtime, as a crashed CLI leaves it.
func writeLock(t testing.TB, dir string, pid int, mtime time.Time) string {
	t.Helper()
	p := filepath.Join(dir, lockFileName(pid))
	if err := os.WriteFile(p, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		touch(t, p, mtime)
	}
	return p
}

func writeHold(t testing.TB, dir string, pid int, mtime time.Time) string {
	t.Helper()
	p := filepath.Join(dir, holdFileName(pid))
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		touch(t, p, mtime)
	}
	return p
}

// startSleeper runs an unrelated long-lived process: this test binary as
// the "sleeper" role, its argv "sleeper 600" on every system.
func startSleeper(t testing.TB) *exec.Cmd {
	t.Helper()
	cmd := helperCmd("sleeper", nil)
	cmd.Args = []string{"sleeper", "600"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// Start returns once exec has begun; the kernel sets up the new
	// command line a moment later.
	waitFor(t, "the sleeper's command line", func() bool { return readProc(cmd.Process.Pid).argv != nil })
	return cmd
}

// deadPID returns a pid that no process has: one that just exited and was reaped.
func deadPID(t testing.TB) int {
	t.Helper()
	cmd := helperCmd("exit", nil)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// sinceBoot returns a time d after the machine booted, for locks that must
// not predate the boot.
func sinceBoot(t testing.TB, d time.Duration) time.Time {
	t.Helper()
	b, err := bootTime()
	if err != nil {
		t.Fatal(err)
	}
	return b.Add(d)
}

func newEngine(t testing.TB, dir string, settle time.Duration) *Engine {
	return New(Options{StateDir: dir, Settle: settle, Logger: quiet, Now: clockOf(t)})
}

func mustSession(t testing.TB, e *Engine, id string) Session {
	t.Helper()
	s, err := e.Judge(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// refsOf reads session id's holders as a listing finds them.
func refsOf(t testing.TB, e *Engine, id string) []lockRef {
	t.Helper()
	dir := filepath.Join(e.dir, id)
	snap, err := e.readSessionDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := openDirStat(dir)
	defer st.close()
	var refs []lockRef
	for _, i := range holderStarts(snap.files) {
		if r, ok := refAt(id, dir, snap.files, i, st); ok {
			refs = append(refs, r)
		}
	}
	return refs
}

// listingOpts are a listing's judgement options; decisionOpts a decision's
// that proves owners.
func (e *Engine) listingOpts() judgeOpts { return e.optsFor(&dirSnapshot{}, e.platform()) }

func (e *Engine) decisionOpts() judgeOpts {
	o := e.listingOpts()
	o.decision, o.prove = true, true
	return o
}
