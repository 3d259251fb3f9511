//go:build realcli && linux

package realcli_test

// A lock naming a live process that is not its writer: the real CLI is fooled
// by kill(pid, 0), the sidecar is not.

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/realcli"
	"github.com/copilot-ide/sessionlocks/rpc"
)

// bootTime reads the kernel's boot time (whole seconds are enough here).
func bootTime(t *testing.T) time.Time {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return time.Unix(n, 0)
		}
	}
	t.Fatal("no btime in /proc/stat")
	return time.Time{}
}

// TestPIDReuse: a lock naming a live process that started after the lock
// was written. The CLI 1.0.102 is fooled (it reports the session in use); the
// sidecar is not.
func TestPIDReuse(t *testing.T) {
	for _, withHold := range []bool{false, true} {
		name, wantReason := "lock only", "pid-reused"
		if withHold {
			name, wantReason = "lock and unflocked hold", "hold-released"
		}
		t.Run(name, func(t *testing.T) {
			env, id, p, h := newSession(t)
			p.Kill()
			os.Remove(h.Lock)
			os.Remove(h.Hold)

			// The unrelated process that "reuses" the pid.
			sleeper := exec.Command("sleep", "3600")
			sleeper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := sleeper.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })

			// Written an hour before the process started, but after boot.
			written := time.Now().Add(-time.Hour)
			if boot := bootTime(t); written.Before(boot.Add(time.Minute)) {
				written = boot.Add(time.Since(boot) / 2)
				if time.Since(written) < 10*time.Second {
					t.Skip("booted too recently to date a lock between boot and now")
				}
			}
			planted := realcli.HolderFiles(env.SessionDir(id), sleeper.Process.Pid)
			if err := os.WriteFile(planted.Lock, []byte(strconv.Itoa(planted.PID)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			files := []string{planted.Lock}
			if withHold {
				if err := os.WriteFile(planted.Hold, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, planted.Hold)
			}
			for _, f := range files {
				if err := os.Chtimes(f, written, written); err != nil {
					t.Fatal(err)
				}
			}

			sc := startSidecar(t, env)
			r := sc.canResume(id)
			holder, ok := holderFor(r.Holders, planted.PID)
			if !r.CanResume || r.State != rpc.SessionStale || !ok || holder.Verdict != rpc.VerdictStale || string(holder.Reason) != wantReason {
				t.Fatalf("canResume with a lock naming live pid %d (sleep): %s", planted.PID, mustJSON(r))
			}
			t.Logf("sidecar: canResume=%v, %s: %s", r.CanResume, holder.Reason, holder.Detail)

			// The CLI itself, non-interactively: it keeps the lock and
			// records the session as already in use (and opens it anyway).
			p2, h2, inUse, _ := resumeCLI(t, env, id)
			if !inUse {
				t.Errorf("copilot %s resumed with alreadyInUse=false: the CLI is no longer fooled by a reused pid (update docs/realcli.md)", realcli.Version)
			} else {
				t.Logf("copilot -p --resume: alreadyInUse=true with only a reused-pid lock (the CLI is fooled)")
			}
			if !exists(planted.Lock) {
				t.Errorf("the CLI removed the lock of live pid %d", planted.PID)
			}
			killCLI(t, p2, h2)

			t.Run("interactive dialog", func(t *testing.T) {
				term := interactive(t, env, "--resume="+id)
				screen, found, err := term.WaitScreen(ctxLong(t), "Session in use")
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("copilot --resume shows %q:\n%s", found, dialog(screen))
			})

			rr := reclaim(t, sc, id, planted.PID)
			if _, ok := holderFor(rr.Reclaimed, p2.PID); !ok {
				// TestSIGKILL insists on this; here it is incidental.
				t.Logf("reclaimStale did not (yet) reclaim the just-SIGKILLed CLI's lock: %s", mustJSON(rr))
			}
			for _, f := range files {
				if exists(f) {
					t.Errorf("reclaimStale left %s", f)
				}
			}
			if sleeper.ProcessState != nil || syscall.Kill(sleeper.Process.Pid, 0) != nil {
				t.Errorf("the process whose pid the lock named is gone: nothing may signal it")
			}
			p3, _, inUse, pids := resumeCLI(t, env, id)
			wantNotInUse(t, env, p3, "resuming after reclaimStale", inUse, pids)
		})
	}
}

// dialog cuts the box holding "Session in use" out of a screen.
func dialog(screen string) string {
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		if strings.Contains(l, "Session in use") {
			from, to := max(i-1, 0), min(i+8, len(lines))
			for j := from; j < to; j++ {
				lines[j] = strings.TrimRight(strings.Trim(lines[j], " │"), " ")
			}
			return strings.Join(lines[from:to], "\n")
		}
	}
	return screen
}
