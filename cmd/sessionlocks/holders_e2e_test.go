package main

// The binary over its pipes, on every system (Windows under Wine in `make
// test-windows`): a live holder reads inUse; one killed without a chance to
// clean up (SIGKILL, TerminateProcess) is pushed stale within a second;
// reclaimStale keeps the live one; forceResume with terminate either stops
// the live holder or keeps its files, never a running CLI without its lock;
// and nothing is left set aside. Also what a crash of an older build left
// set aside is recovered by the next listing.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/rpc"
)

func TestHoldersThroughTheBinary(t *testing.T) {
	bin := serveBinary(t)
	state := t.TempDir()
	live := fakeHolder(t, bin, state, "live")
	victim := fakeHolderCmd(t, bin, state, "victim")
	time.Sleep(300 * time.Millisecond) // both locks past the settle window below
	s := startServe(t, bin, rpc.FramingHeader, "--state-dir", state, "--settle", "200ms")
	ctx := context.Background()
	canResume := func(id string) rpc.CanResumeResult {
		t.Helper()
		var r rpc.CanResumeResult
		if err := s.client.Call(ctx, rpc.MethodCanResume, rpc.CanResumeParams{SessionID: id}, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := canResume("live"); r.State != rpc.SessionInUse {
		t.Fatalf("a live holder: %s (%s)", r.State, r.Message)
	}
	var st rpc.StatusResult
	waitUntil(t, "the watcher started", func() bool { s.client.Call(ctx, rpc.MethodStatus, nil, &st); return st.Watching })

	victim.Process.Kill() // SIGKILL, TerminateProcess: no chance to clean up
	killed := time.Now()
	victim.Wait()
	for {
		select {
		case n := <-s.notes:
			if i := slices.IndexFunc(n.Changed, func(x rpc.Session) bool { return x.ID == "victim" }); i >= 0 && n.Changed[i].State == rpc.SessionStale {
				if d := time.Since(killed); d > time.Second {
					t.Errorf("stale pushed %v after the kill, want within 1 s", d)
				}
				goto pushed
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the killed holder was never pushed stale")
		}
	}
pushed:
	var rr rpc.ReclaimStaleResult
	if err := s.client.Call(ctx, rpc.MethodReclaimStale, rpc.ReclaimStaleParams{}, &rr); err != nil {
		t.Fatal(err)
	}
	if rr.Totals.Reclaimed != 1 || !slices.ContainsFunc(rr.Kept, func(h rpc.Holder) bool { return h.PID == live }) {
		t.Errorf("reclaimStale: reclaimed %d, kept %+v; want the killed one's files removed and the live one kept", rr.Totals.Reclaimed, rr.Kept)
	}

	seen := canResume("live")
	var fr rpc.ForceResumeResult
	if err := s.client.Call(ctx, rpc.MethodForceResume, map[string]any{"sessionId": "live", "expect": seen.Token, "terminate": true, "graceMs": 2000}, &fr); err != nil {
		t.Fatal(err)
	}
	stopped := slices.Contains(fr.Exited, live)
	lockThere := exists(filepath.Join(state, "live", "inuse."+strconv.Itoa(live)+".lock"))
	if !stopped && (!lockThere || fr.Session.State != rpc.SessionInUse) {
		t.Errorf("forceResume with terminate left pid %d running without its lock (session %s, kept %d, not signalled %+v)", live, fr.Session.State, len(fr.Kept), fr.NotSignalled)
	}
	t.Logf("forceResume with terminate: exited %v, killed %v, not signalled %+v, session %s", fr.Exited, fr.Killed, fr.NotSignalled, fr.Session.State)
	for _, id := range []string{"live", "victim"} {
		ents, _ := os.ReadDir(filepath.Join(state, id))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".sessionlocks-") {
				t.Errorf("left set aside in %s: %s", id, e.Name())
			}
		}
	}
}

// TestRecoveryThroughTheBinary: a sidecar of an older build, killed in the
// middle of a removal, left a live CLI's .lock set aside under a name that
// kept nothing of it. The next sidecar puts it back, and the session does not
// read free.
func TestRecoveryThroughTheBinary(t *testing.T) {
	bin := serveBinary(t)
	state := t.TempDir()
	pid := fakeHolder(t, bin, state, "s", "--old")
	dir := filepath.Join(state, "s")
	lock := filepath.Join(dir, "inuse."+strconv.Itoa(pid)+".lock")
	if err := os.Rename(lock, filepath.Join(dir, ".sessionlocks-removing-0123456789abcdef")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	s := startServe(t, bin, rpc.FramingHeader, "--state-dir", state, "--settle", "200ms", "--no-watch")
	var r rpc.CanResumeResult
	if err := s.client.Call(context.Background(), rpc.MethodCanResume, rpc.CanResumeParams{SessionID: "s"}, &r); err != nil {
		t.Fatal(err)
	}
	// (An old-format lock whose process runs: live or unknown, anything but
	// resumable.)
	if r.CanResume || !exists(lock) {
		t.Fatalf("canResume %v, state %s, lock put back %v: a live process's set-aside lock must be recovered", r.CanResume, r.State, exists(lock))
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// waitUntil polls cond for up to 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
