package main

// Decisions through the real binary: forceResume acts on what the user saw
// (expect), and a cancelled one either did nothing (-32800) or, having
// begun, finishes and says what it did in an answer the client shows late.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/testbin"
	"github.com/copilot-ide/sessionlocks/rpc"
)

// fakeHolder runs a fake CLI on a session until the test ends: the binary's
// own, or given flags only tests use, the tests' build of it.
func fakeHolder(t *testing.T, bin, state, id string, args ...string) int {
	t.Helper()
	return fakeHolderCmd(t, bin, state, id, args...).Process.Pid
}

// fakeHolderCmd is fakeHolder, giving its command.
func fakeHolderCmd(t *testing.T, bin, state, id string, args ...string) *exec.Cmd {
	t.Helper()
	argv := []string{bin, "_fakecli"}
	if len(args) > 0 {
		cli, err := testbin.FakeCLI(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		argv = []string{cli}
	}
	cmd := exec.Command(argv[0], slices.Concat(argv[1:], []string{"--state-dir", state, "--session", id}, args)...)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 64)
	if n, err := out.Read(buf); err != nil || !strings.HasPrefix(string(buf[:n]), "ready") {
		t.Fatalf("fake CLI: %q %v", buf[:n], err)
	}
	return cmd
}

func TestServeCancelledForceResume(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM")
	}
	bin := serveBinary(t)
	t.Run("cancelled once it has signalled: the late answer says what it did", func(t *testing.T) {
		state := t.TempDir()
		pid := fakeHolder(t, bin, state, "s", "--ignore-term")
		s := startServe(t, bin, rpc.FramingHeader, "--state-dir", state, "--settle", "50ms", "--no-watch")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(500*time.Millisecond, cancel) // well into the 3 s grace
		err := s.client.Call(ctx, rpc.MethodForceResume, map[string]any{"sessionId": "s", "terminate": true, "graceMs": 3000}, nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Call = %v, want context.Canceled", err)
		}
		var late lateAnswer
		select {
		case late = <-s.late:
		case <-time.After(15 * time.Second):
			t.Fatal("no late answer: the client dropped it, or the server never sent it")
		}
		if late.err != nil {
			t.Fatalf("late answer: error %d %s; want the result of what it did", late.err.Code, late.err.Message)
		}
		var fr rpc.ForceResumeResult
		json.Unmarshal(late.result, &fr)
		if !slices.Equal(fr.Signalled, []int{pid}) || !slices.Equal(fr.StillRunning, []int{pid}) || fr.Session.State != rpc.SessionInUse {
			t.Errorf("late answer: signalled %v still running %v state %s; want the survivor listed and its session still in use", fr.Signalled, fr.StillRunning, fr.Session.State)
		}
		if _, err := os.Stat(filepath.Join(state, "s", "inuse."+itoa(pid)+".lock")); err != nil {
			t.Fatal("the survivor's lock was removed: the session reads free while it runs")
		}
	})
	t.Run("cancelled before it acted: nothing was done", func(t *testing.T) {
		state := t.TempDir()
		pid := fakeHolder(t, bin, state, "s")
		holdLocked(t, filepath.Join(state, ".session-operation-locks", "s.lock"), 60)
		s := startServe(t, bin, rpc.FramingHeader, "--state-dir", state, "--settle", "50ms", "--no-watch")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel) // while it waits for the operation lock
		s.client.Call(ctx, rpc.MethodForceResume, map[string]any{"sessionId": "s", "terminate": true}, nil)
		late := <-s.late
		if late.err == nil || late.err.Code != rpc.CodeRequestCancelled {
			t.Fatalf("late answer %s %v, want -32800", late.result, late.err)
		}
		if _, err := os.Stat(filepath.Join(state, "s", "inuse."+itoa(pid)+".lock")); err != nil {
			t.Fatal("a cancelled forceResume removed a lock")
		}
	})
}

func TestServeForceResumeExpect(t *testing.T) {
	bin := serveBinary(t)
	state := t.TempDir()
	e2eSession(t, state, "s", 2147483000) // a crashed CLI's lock
	s := startServe(t, bin, rpc.FramingHeader, "--state-dir", state, "--no-watch")
	ctx := context.Background()
	var seen rpc.CanResumeResult
	if err := s.client.Call(ctx, rpc.MethodCanResume, map[string]string{"sessionId": "s"}, &seen); err != nil {
		t.Fatal(err)
	}
	if !seen.CanResume || seen.Token == "" {
		t.Fatalf("canResume: %+v", seen)
	}
	// The user is asked; meanwhile a CLI opens the session.
	pid := fakeHolder(t, bin, state, "s")
	err := s.client.Call(ctx, rpc.MethodForceResume, map[string]any{"sessionId": "s", "expect": seen.Token}, nil)
	var e *rpc.Error
	if !errors.As(err, &e) || e.Code != rpc.CodeSessionChanged {
		t.Fatalf("forceResume = %v, want -32005", err)
	}
	var fresh rpc.CanResumeResult
	if e.Data == nil || json.Unmarshal(*e.Data, &fresh) != nil || fresh.CanResume || !slices.ContainsFunc(fresh.Holders, func(h rpc.Holder) bool { return h.PID == pid }) {
		t.Fatalf("data %s: want the fresh canResume answer showing the new CLI", *e.Data)
	}
	for _, f := range []string{".lock", ".hold"} {
		if _, err := os.Stat(filepath.Join(state, "s", "inuse."+itoa(pid)+f)); err != nil {
			t.Errorf("the new CLI's %s was removed", f)
		}
	}
	// Asked again with what is there now, the user takes it over.
	var fr rpc.ForceResumeResult
	if err := s.client.Call(ctx, rpc.MethodForceResume, map[string]any{"sessionId": "s", "expect": fresh.Token}, &fr); err != nil {
		t.Fatal(err)
	}
	if len(fr.Removed) != 2 || fr.Session.State != rpc.SessionFree {
		t.Errorf("forceResume with the fresh token: removed %d, state %s", len(fr.Removed), fr.Session.State)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
