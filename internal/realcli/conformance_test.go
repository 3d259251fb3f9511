//go:build realcli && linux

package realcli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/copilot-ide/sessionlocks/internal/realcli"
	"github.com/copilot-ide/sessionlocks/rpc"
)

// waitHoldLocked asks canResume until the holder for pid is judged
// hold-locked (a fresh lock is "starting" for the settle window first).
// Every answer on the way must say the session is in use: a live CLI is never
// resumable, not even for one answer.
func waitHoldLocked(t *testing.T, sc *sidecar, id string, pid int) rpc.CanResumeResult {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		r := sc.canResume(id)
		h, ok := holderFor(r.Holders, pid)
		if r.CanResume || r.State != rpc.SessionInUse || !ok || h.Verdict != rpc.VerdictLive {
			t.Fatalf("canResume while copilot pid %d is running: %s", pid, mustJSON(r))
		}
		if h.Reason == "hold-locked" {
			return r
		}
		if h.Reason != "starting" {
			t.Fatalf("live holder pid %d: reason %q, want starting then hold-locked: %s", pid, h.Reason, mustJSON(h))
		}
		if time.Now().After(deadline) {
			t.Fatalf("holder pid %d still %q after %v", pid, h.Reason, waitLong)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// workspace reads the keys the sidecar reports from the CLI's workspace.yaml.
func workspace(t *testing.T, sessionDir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sessionDir, "workspace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("workspace.yaml: %v", err)
	}
	return m
}

// TestLiveSession: a running CLI is in use, judged by its flocked .hold, and
// the session's name and cwd come from the CLI's own workspace.yaml.
func TestLiveSession(t *testing.T) {
	env := newEnv(t)
	p, h := startCLI(t, env, "", "conformance check")
	sc := startSidecar(t, env)

	r := waitHoldLocked(t, sc, h.SessionID, p.PID)
	t.Logf("canResume: canResume=%v state=%s message=%q", r.CanResume, r.State, r.Message)
	if r.Message == "" {
		t.Errorf("canResume gave no message for the IDE's prompt")
	}
	holder, _ := holderFor(r.Holders, p.PID)
	if holder.LockFile != h.Lock || holder.HoldFile != h.Hold {
		t.Errorf("holder files %q, %q; want %q, %q", holder.LockFile, holder.HoldFile, h.Lock, h.Hold)
	}
	if holder.Owner == nil || holder.Process == nil || !strings.Contains(holder.Process.Command, "@github/copilot-linux-") {
		t.Errorf("the real CLI was not recognised as the writer: %s", mustJSON(holder))
	}
	t.Logf("holder: %s", holder.Detail)

	// The CLI writes workspace.yaml before its lock, and adds the name (taken
	// from the first prompt) about 0.2 s after locking.
	ws := workspace(t, env.SessionDir(h.SessionID))
	for ctx := ctxLong(t); ws["name"] == nil && ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		ws = workspace(t, env.SessionDir(h.SessionID))
	}
	if ws["name"] != "conformance check" {
		t.Errorf("workspace.yaml name %q: the CLI no longer names a session after its first prompt", ws["name"])
	}
	keys := yamlKeys(t, filepath.Join(env.SessionDir(h.SessionID), "workspace.yaml"))
	if strings.Join(keys, ",") != strings.Join(workspaceKeys, ",") {
		t.Errorf("the real workspace.yaml has keys %v; the fixture has %v", keys, workspaceKeys)
	}
	s := sc.session(h.SessionID)
	if s.State != rpc.SessionInUse || s.Conflict {
		t.Errorf("listSessions: %s", describe(s))
	}
	if s.Name == "" || s.Name != ws["name"] {
		t.Errorf("name %q, workspace.yaml says %q", s.Name, ws["name"])
	}
	if s.CWD != env.Workdir || ws["cwd"] != env.Workdir {
		t.Errorf("cwd %q, workspace.yaml says %q, the CLI ran in %q", s.CWD, ws["cwd"], env.Workdir)
	}
	if s.ClientName != ws["client_name"] {
		t.Errorf("clientName %q, workspace.yaml says %q", s.ClientName, ws["client_name"])
	}
	if s.CreatedAt == "" || s.UpdatedAt == "" {
		t.Errorf("createdAt %q updatedAt %q: want both from workspace.yaml", s.CreatedAt, s.UpdatedAt)
	}
	t.Logf("listSessions: name=%q cwd=%q clientName=%q %s", s.Name, s.CWD, s.ClientName, describe(s))
}

// TestSidecarBeforeStateDir: the IDE starts the sidecar on a machine where
// the CLI has never run; the first session still gets pushed.
func TestSidecarBeforeStateDir(t *testing.T) {
	env := newEnv(t)
	sc := startSidecar(t, env)
	var st rpc.StatusResult
	sc.call("status", struct{}{}, &st)
	if st.StateDir != env.StateDir() {
		t.Errorf("status.stateDir %q, want %q", st.StateDir, env.StateDir())
	}
	if exists(filepath.Join(env.Home, ".copilot")) {
		t.Fatalf("~/.copilot exists before the CLI ran")
	}
	t.Logf("status before the state dir exists: watching=%v", st.Watching)

	mark := sc.mark()
	id := newSessionID(t)
	p, _ := startCLI(t, env, id, "hi", "--session-id="+id)
	sc.waitNotified(mark, id, "inUse", func(s rpc.Session) bool {
		h, ok := holderFor(s.Holders, p.PID)
		return s.State == rpc.SessionInUse && ok && h.Verdict == rpc.VerdictLive
	})
	// The settle window ends without any file changing; the watcher's timer says so.
	sc.waitNotified(mark, id, "inUse/hold-locked", func(s rpc.Session) bool {
		h, ok := holderFor(s.Holders, p.PID)
		return s.State == rpc.SessionInUse && ok && h.Reason == "hold-locked"
	})
}

// TestSIGKILL: a crashed CLI's session is pushed as stale, is resumable,
// reclaimStale removes both files, and the CLI resumes it without complaint.
func TestSIGKILL(t *testing.T) {
	env, id, p, h := newSession(t)
	sc := startSidecar(t, env)
	waitHoldLocked(t, sc, id, p.PID)

	mark := sc.mark()
	killed := time.Now()
	killCLI(t, p, h)
	sc.waitNotified(mark, id, "stale", func(s rpc.Session) bool { return s.State == rpc.SessionStale })
	t.Logf("stale pushed within %v of SIGKILL (logged, not asserted)", time.Since(killed).Round(time.Millisecond))

	r := sc.canResume(id)
	holder, ok := holderFor(r.Holders, p.PID)
	if !r.CanResume || r.State != rpc.SessionStale || !ok || holder.Verdict != rpc.VerdictStale ||
		(holder.Reason != "hold-released" && holder.Reason != "process-exited") {
		t.Fatalf("canResume after SIGKILL: %s", mustJSON(r))
	}
	t.Logf("canResume after SIGKILL: %q; holder: %s", r.Message, holder.Detail)

	reclaim(t, sc, id, p.PID)
	if exists(h.Lock) || exists(h.Hold) {
		t.Fatalf("reclaimStale left %s or its .hold", h.Lock)
	}

	t.Run("resume -p", func(t *testing.T) {
		mark := sc.mark()
		p2, h2, inUse, pids := resumeCLI(t, env, id)
		wantNotInUse(t, env, p2, "resuming the reclaimed session", inUse, pids)
		sc.waitNotified(mark, id, "inUse again", func(s rpc.Session) bool {
			_, ok := holderFor(s.Holders, p2.PID)
			return s.State == rpc.SessionInUse && ok
		})
		killCLI(t, p2, h2)
		reclaim(t, sc, id, p2.PID)
	})

	t.Run("resume interactively", func(t *testing.T) {
		// The event may come at startup or with the first prompt.
		before := len(resumes(t, env.SessionDir(id)))
		term := interactive(t, env, "--resume="+id)
		ctx := ctxLong(t)
		screen, found, err := term.WaitScreen(ctx, "Session in use", "? help")
		if err != nil {
			t.Fatal(err)
		}
		if found != "? help" {
			t.Fatalf("interactive resume of a reclaimed session complained:\n%s", screen)
		}
		// An interactive resume locks the session only once a prompt is submitted.
		if err := term.Send(ctx, "resume check", "Enter"); err != nil {
			t.Fatal(err)
		}
		if _, err := term.WaitHolder(ctx, env, id); err != nil {
			t.Fatal(err)
		}
		ev, ok := waitResumeEvent(t, env, id, before)
		if !ok {
			t.Errorf("interactive resume wrote no session.resume event")
		} else if ev.Data.AlreadyInUse == nil || *ev.Data.AlreadyInUse {
			t.Errorf("interactive resume recorded alreadyInUse=%v", ev.Data.AlreadyInUse)
		}
		if screen, _ := term.Screen(ctx); strings.Contains(screen, "Session in use") {
			t.Errorf("interactive resume showed the in-use dialog:\n%s", screen)
		}
	})
}

// waitReason asks canResume until pid's holder has the given reason; every
// answer on the way must be stale.
func waitReason(t *testing.T, sc *sidecar, id string, pid int, reason string) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	for {
		r := sc.canResume(id)
		h, ok := holderFor(r.Holders, pid)
		// Within the settle window a lock with a .hold counts as opening
		// (live, starting): its .hold is not probed yet. Anything else
		// that is not stale is wrong.
		opening := ok && h.Verdict == rpc.VerdictLive && string(h.Reason) == "starting"
		if !opening && (!ok || h.Verdict != rpc.VerdictStale || !r.CanResume) {
			t.Fatalf("canResume for the leftovers of pid %d: %s", pid, mustJSON(r))
		}
		if string(h.Reason) == reason {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("holder pid %d still %q after %v, want %q", pid, h.Reason, waitLong, reason)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// reclaim calls reclaimStale for one session and checks that pid's holder was reclaimed.
func reclaim(t *testing.T, sc *sidecar, id string, pid int) rpc.ReclaimStaleResult {
	t.Helper()
	var r rpc.ReclaimStaleResult
	sc.call("reclaimStale", rpc.ReclaimStaleParams{SessionIDs: []string{id}}, &r)
	if _, ok := holderFor(r.Reclaimed, pid); !ok {
		t.Fatalf("reclaimStale did not reclaim pid %d: %s", pid, mustJSON(r))
	}
	for _, f := range r.Failed {
		t.Logf("reclaimStale could not reclaim pid %d: %s", f.Holder.PID, f.Error)
	}
	return r
}

// interactive starts the CLI in tmux, skipping when tmux is missing.
func interactive(t *testing.T, env *realcli.Env, args ...string) *realcli.Terminal {
	t.Helper()
	term, err := env.Interactive(ctxLong(t), args...)
	if err == realcli.ErrNoTmux {
		t.Skip("tmux is not installed: the interactive CLI cannot be driven")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(term.Close)
	return term
}

// TestForceResumeTerminate: forceResume with terminate sends SIGTERM to the
// real CLI, which exits, and no lock is left behind.
func TestForceResumeTerminate(t *testing.T) {
	env, id, p, h := newSession(t)
	sc := startSidecar(t, env)
	waitHoldLocked(t, sc, id, p.PID)

	grace := 10000
	var r rpc.ForceResumeResult
	sc.call("forceResume", rpc.ForceResumeParams{SessionID: id, Terminate: true, GraceMs: &grace}, &r)
	t.Logf("forceResume: exited=%v removed=%d session %s", r.Exited, len(r.Removed), describe(r.Session))
	if len(r.Exited) != 1 || r.Exited[0] != p.PID {
		t.Errorf("exited %v, want [%d]", r.Exited, p.PID)
	}
	st, err := p.Wait(ctxLong(t))
	if err != nil {
		t.Fatalf("the CLI survived forceResume: %v", err)
	}
	ws := st.Sys().(syscall.WaitStatus)
	t.Logf("copilot exit after SIGTERM: %v (signaled=%v exit=%d)", st, ws.Signaled(), ws.ExitStatus())
	if exists(h.Lock) || exists(h.Hold) {
		t.Errorf("forceResume left %s or its .hold", h.Lock)
	}
	if r.Session.State != rpc.SessionFree || len(r.Session.Holders) != 0 {
		t.Errorf("session after forceResume: %s", describe(r.Session))
	}
	if c := sc.canResume(id); !c.CanResume || c.State != rpc.SessionFree {
		t.Errorf("canResume after forceResume: %s", mustJSON(c))
	}
}

// TestConflict: `copilot -p --resume=<id>` does not refuse a session another
// CLI holds; it records alreadyInUse=true and opens it anyway. Two live
// writers on one events.jsonl is what conflict is for.
func TestConflict(t *testing.T) {
	env, id, first, _ := newSession(t)
	second, _, inUse, _ := resumeCLI(t, env, id)
	if !inUse {
		t.Errorf("the second CLI resumed a live session with alreadyInUse=false")
	}
	sc := startSidecar(t, env)
	r := sc.canResume(id)
	t.Logf("canResume with two CLIs: %q %s", r.Message, mustJSON(r.Holders))
	if r.CanResume || r.State != rpc.SessionInUse || !r.Conflict {
		t.Errorf("canResume: canResume=%v state=%s conflict=%v, want false/inUse/true", r.CanResume, r.State, r.Conflict)
	}
	for _, p := range []*realcli.Proc{first, second} {
		if h, ok := holderFor(r.Holders, p.PID); !ok || h.Verdict != rpc.VerdictLive {
			t.Errorf("pid %d: %s", p.PID, mustJSON(h))
		}
	}
}

// TestExitPaths: whichever way the CLI ends, what it leaves behind is either
// nothing or stale, and reclaimStale clears it.
func TestExitPaths(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			env, id, p, h := newSession(t)
			sc := startSidecar(t, env)
			p.Signal(sig)
			st, err := p.Wait(ctxLong(t))
			if err != nil {
				t.Fatalf("copilot ignored %v: %v", sig, err)
			}
			left := exists(h.Lock) || exists(h.Hold)
			t.Logf("copilot after %v: %v; left its lock behind: %v", sig, st, left)
			if left {
				// A young lock with a .hold counts as opening until the
				// settle window has passed and the .hold can be probed
				// safely; then it is found free.
				waitReason(t, sc, id, p.PID, "hold-released")
			}
			r := sc.canResume(id)
			if !r.CanResume {
				t.Fatalf("canResume after %v: %s", sig, mustJSON(r))
			}
			if left {
				reclaim(t, sc, id, p.PID)
			} else if r.State != rpc.SessionFree {
				t.Errorf("no files left, yet state %s", r.State)
			}
		})
	}
}
