package main

// End-to-end tests of serve, call and version: they build the binary and
// drive it over real pipes, as the IDE does.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/testbin"
	"github.com/copilot-ide/sessionlocks/rpc"
)

// serveBinary builds the sessionlocks binary into a temporary directory.
func serveBinary(t testing.TB) string {
	t.Helper()
	bin, err := testbin.Sidecar(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// e2eSession writes a session directory with a workspace.yaml and, for
// each pid, an inuse.<pid>.lock.
func e2eSession(t testing.TB, stateDir, id string, pids ...int) {
	t.Helper()
	dir := filepath.Join(stateDir, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A working directory of this system's kind: on Windows a session that
	// names none may be a WSL CLI's, whose young locks read unknown.
	ws := fmt.Sprintf("id: %s\nname: %s\ncwd: %s\ncreated_at: 2026-01-01T10:00:00.000Z\nupdated_at: 2026-01-02T10:00:00.000Z\n", id, id, demoCWD("e2e"))
	if err := os.WriteFile(filepath.Join(dir, "workspace.yaml"), []byte(ws), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("inuse.%d.lock", pid)), []byte(fmt.Sprintln(pid)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type served struct {
	cmd    *exec.Cmd
	client *rpc.Client
	stderr *bytes.Buffer
	exited chan error
	notes  chan rpc.SessionsChangedParams
	late   chan lateAnswer // answers to calls whose ctx ended first
}

type lateAnswer struct {
	method string
	result json.RawMessage
	err    *rpc.Error
}

func startServe(t *testing.T, bin string, framing rpc.Framing, args ...string) *served {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	s := &served{cmd: cmd, stderr: &bytes.Buffer{}, exited: make(chan error, 1), notes: make(chan rpc.SessionsChangedParams, 100), late: make(chan lateAnswer, 10)}
	cmd.Stderr = s.stderr
	client, err := rpc.DialCommand(cmd, rpc.ClientOptions{
		Framing: framing,
		OnNotification: func(method string, params json.RawMessage) {
			var p rpc.SessionsChangedParams
			if method == rpc.NotifySessionsChanged && json.Unmarshal(params, &p) == nil {
				s.notes <- p
			}
		},
		OnLateAnswer: func(method string, result json.RawMessage, err *rpc.Error) {
			s.late <- lateAnswer{method, result, err}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.client = client
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		client.Close()
		cmd.Process.Kill()
		<-s.exited
		if t.Failed() {
			t.Logf("serve's stderr:\n%s", s.stderr)
		}
	})
	return s
}

// waitExit waits (generously; the goal of 1 s is a benchmark's business)
// for the server to exit and returns how long it took.
func (s *served) waitExit(t *testing.T) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	select {
	case err := <-s.exited:
		s.exited <- err // for Cleanup
		return time.Since(start), err
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not exit within 10s")
		return 0, nil
	}
}

func TestServeEndToEnd(t *testing.T) {
	bin := serveBinary(t)
	state := filepath.Join(t.TempDir(), "session-state")
	e2eSession(t, state, "free-1")
	e2eSession(t, state, "stale-1", 2147483000)

	// A live holder: the fake CLI, a real process holding a real flock.
	live := exec.Command(bin, "_fakecli", "--state-dir", state, "--session", "live-1", "--exit-on-eof")
	liveIn, _ := live.StdinPipe()
	liveOut, _ := live.StdoutPipe()
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { liveIn.Close(); live.Process.Kill(); live.Wait() }()
	if line, err := bufio.NewReader(liveOut).ReadString('\n'); err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("fake CLI: %q %v", line, err)
	}

	for _, framing := range []rpc.Framing{rpc.FramingHeader, rpc.FramingLine} {
		t.Run(framing.String(), func(t *testing.T) {
			s := startServe(t, bin, framing, "--state-dir", state, "--settle", "1ms", "--log-level", "debug")
			ctx := context.Background()

			var st rpc.StatusResult
			if err := s.client.Call(ctx, rpc.MethodStatus, nil, &st); err != nil {
				t.Fatal(err)
			}
			if st.PID != s.cmd.Process.Pid || st.StateDir != state || !st.Watching || st.Watch == nil {
				t.Errorf("status: %+v", st)
			}

			var list rpc.ListSessionsResult
			if err := s.client.Call(ctx, rpc.MethodListSessions, nil, &list); err != nil {
				t.Fatal(err)
			}
			states := map[string]rpc.SessionState{}
			for _, ss := range list.Sessions {
				states[ss.ID] = ss.State
			}
			want := map[string]rpc.SessionState{"free-1": rpc.SessionFree, "stale-1": rpc.SessionStale, "live-1": rpc.SessionInUse}
			for id, w := range want {
				if states[id] != w {
					t.Errorf("session %s: state %q, want %q (all: %v)", id, states[id], w, states)
				}
			}

			var cr rpc.CanResumeResult
			if err := s.client.Call(ctx, rpc.MethodCanResume, map[string]string{"sessionId": "live-1"}, &cr); err != nil {
				t.Fatal(err)
			}
			if cr.CanResume || cr.State != rpc.SessionInUse || !strings.HasPrefix(cr.Message, fmt.Sprintf("In use by pid %d", live.Process.Pid)) {
				t.Errorf("canResume(live-1) = %+v", cr)
			}

			var rc rpc.ReclaimStaleResult
			if err := s.client.Call(ctx, rpc.MethodReclaimStale, map[string]any{"dryRun": true}, &rc); err != nil {
				t.Fatal(err)
			}
			for _, h := range rc.Reclaimed {
				if h.PID == live.Process.Pid {
					t.Fatalf("a dry run would reclaim the live holder: %+v", h)
				}
			}
			if len(rc.Reclaimed) != 1 || rc.Reclaimed[0].SessionID != "stale-1" {
				t.Errorf("reclaimStale dryRun: %+v", rc)
			}

			err := s.client.Call(ctx, rpc.MethodCanResume, map[string]string{"sessionId": "../etc"}, nil)
			var e *rpc.Error
			if !errors.As(err, &e) || e.Code != rpc.CodeInvalidParams || !strings.Contains(e.Message, "sessionId") {
				t.Errorf("traversal id: %v", err)
			}

			// stdin EOF: exit 0.
			s.client.Close()
			d, err := s.waitExit(t)
			if err != nil {
				t.Fatalf("serve exited with %v after stdin closed", err)
			}
			t.Logf("exited %v after stdin closed", d)
			if strings.Contains(s.stderr.String(), "level=ERROR") {
				t.Errorf("errors logged:\n%s", s.stderr)
			}
		})
	}
}

// TestServeForceResumeTerminates: forceResume with terminate stops a
// verified CLI and removes its locks; sessionsChanged reports the change.
func TestServeForceResumeTerminates(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM")
	}
	bin := serveBinary(t)
	state := filepath.Join(t.TempDir(), "session-state")
	// The fake CLI must look like the real one to be verified: run it under
	// the name "copilot".
	cli, err := testbin.FakeCLI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live := exec.Command(cli, "--state-dir", state, "--session", "live-2")
	liveOut, _ := live.StdoutPipe()
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	liveDone := make(chan error, 1)
	go func() { liveDone <- live.Wait() }()
	defer live.Process.Kill()
	if line, err := bufio.NewReader(liveOut).ReadString('\n'); err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("fake CLI: %q %v", line, err)
	}

	s := startServe(t, bin, rpc.FramingHeader, "--state-dir", state, "--settle", "1ms")
	ctx := context.Background()
	// No waiting for the watcher first: a forceResume that comes while it
	// starts waits for it in the server, so the removal is still pushed.
	var fr rpc.ForceResumeResult
	if err := s.client.Call(ctx, rpc.MethodForceResume, map[string]any{"sessionId": "live-2", "terminate": true, "graceMs": 5000}, &fr); err != nil {
		t.Fatal(err)
	}
	if len(fr.Exited) != 1 || fr.Exited[0] != live.Process.Pid || fr.Session.State != rpc.SessionFree {
		t.Errorf("forceResume: %+v", fr)
	}
	select {
	case <-liveDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminated CLI is still running")
	}
	// The watcher saw the locks go. (Generous: once, with two full test
	// suites competing for two cores, 10 s was not enough.)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case p := <-s.notes:
			for _, ss := range p.Changed {
				if ss.ID == "live-2" && ss.State == rpc.SessionFree {
					return
				}
			}
		case <-deadline:
			t.Fatal("no sessionsChanged saying live-2 is free")
		}
	}
}

func TestServeSignals(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM")
	}
	bin := serveBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			s := startServe(t, bin, rpc.FramingHeader, "--state-dir", t.TempDir())
			if err := s.client.Call(context.Background(), rpc.MethodStatus, nil, nil); err != nil {
				t.Fatal(err)
			}
			s.cmd.Process.Signal(sig)
			d, err := s.waitExit(t)
			if err != nil {
				t.Fatalf("exit after %v: %v", sig, err)
			}
			t.Logf("exited %v after %v", d, sig)
		})
	}
}

// TestServeStdoutIsProtocolOnly: with a missing state dir, a bad flag-free
// run, and a debug log level, every byte on stdout is a frame.
func TestServeStdoutIsProtocolOnly(t *testing.T) {
	bin := serveBinary(t)
	cmd := exec.Command(bin, "serve", "--state-dir", filepath.Join(t.TempDir(), "missing"), "--log-level", "debug")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"listSessions"}` + "\nnot json\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 answers on stdout, got %q", stdout.String())
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) || !strings.Contains(l, `"jsonrpc":"2.0"`) {
			t.Errorf("stdout line is not a JSON-RPC message: %q", l)
		}
	}
	if !strings.Contains(stderr.String(), "level=") {
		t.Errorf("no logs on stderr: %q", stderr.String())
	}
}

func TestCallCommand(t *testing.T) {
	bin := serveBinary(t)
	state := filepath.Join(t.TempDir(), "session-state")
	e2eSession(t, state, "stale-1", 2147483000)
	run := func(args ...string) (string, string, int) {
		return runBin(t, bin, "", append([]string{"call", "--state-dir", state}, args...)...)
	}
	out, errOut, code := run("canResume", `{"sessionId":"stale-1"}`)
	var cr rpc.CanResumeResult
	if code != 0 || json.Unmarshal([]byte(out), &cr) != nil || !cr.CanResume || cr.State != rpc.SessionStale {
		t.Errorf("call canResume: code %d, out %q, err %q", code, out, errOut)
	}
	if strings.Count(out, "\n") != 1 {
		t.Errorf("output to a pipe should be one compact line: %q", out)
	}
	out, errOut, code = run("canResume", `{"sessionID":"stale-1"}`)
	if code != 1 || out != "" || !strings.Contains(errOut, "error -32602") || !strings.Contains(errOut, `did you mean "sessionId"`) {
		t.Errorf("call with a typo: code %d, out %q, err %q", code, out, errOut)
	}
	_, errOut, code = run("canResume", `{not json`)
	if code != 2 || !strings.Contains(errOut, "not valid JSON") {
		t.Errorf("call with bad JSON: code %d, err %q", code, errOut)
	}
	out, _, code = run("reclaimStale")
	if code != 0 || !strings.Contains(out, `"reclaimed":[{`) {
		t.Errorf("call reclaimStale: code %d, out %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(state, "stale-1", "inuse.2147483000.lock")); !os.IsNotExist(err) {
		t.Errorf("the stale lock is still there: %v", err)
	}
}

func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	if code := runVersion(nil, &out, io.Discard); code != 0 {
		t.Fatal(code)
	}
	want := fmt.Sprintf(" %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if !strings.HasPrefix(out.String(), "sessionlocks ") || !strings.HasSuffix(out.String(), want) {
		t.Errorf("version printed %q", out.String())
	}
}
