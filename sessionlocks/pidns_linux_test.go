package sessionlocks

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A PID reused by another copilot process is the case kill(pid, 0) and an
// argv check both get wrong. To get the same pid again on purpose, the test
// re-runs itself inside a new user+PID namespace, where it may write
// /proc/sys/kernel/ns_last_pid: the first CLI is SIGKILLed, ns_last_pid is
// set to its pid minus one, and a second copilot process is started, which
// receives the dead one's pid.

const nsHelperEnv = "SESSIONLOCKS_TEST_PIDNS"

func TestPIDReusedByAnotherCopilot(t *testing.T) {
	for _, format := range []string{"old", "new"} {
		t.Run(format, func(t *testing.T) {
			sd := t.TempDir()
			newSession(t, sd, "reused")
			cmd := exec.Command("unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount", "--mount-proc", os.Args[0])
			cmd.Env = append(os.Environ(), nsHelperEnv+"="+format, "SESSIONLOCKS_TEST_STATE="+sd, "SESSIONLOCKS_TEST_CLI="+fakeCLI)
			out, err := cmd.CombinedOutput()
			if err != nil {
				if strings.Contains(string(out), "unshare failed") || strings.Contains(string(out), "Operation not permitted") {
					t.Skipf("user+PID namespaces unavailable here: %s", out)
				}
				t.Fatalf("namespace helper: %v\n%s", err, out)
			}
			line := lastLine(string(out))
			fields := strings.SplitN(line, " ", 4)
			if len(fields) < 4 || fields[0] != "verdict" {
				t.Fatalf("helper output: %s", out)
			}
			// The sidecar runs in the namespace too, where every process
			// outside is invisible: an old-format lock's pid proves nothing
			// there. The .hold's kernel lock is seen from any namespace.
			wantVerdict, wantReason := Unknown, ReasonUnprobeable
			if format == "new" {
				wantVerdict, wantReason = Stale, ReasonHoldReleased
			}
			if Verdict(fields[1]) != wantVerdict || Reason(fields[2]) != wantReason {
				t.Errorf("got %s/%s, want %s/%s: %s", fields[1], fields[2], wantVerdict, wantReason, fields[3])
			}
			if !strings.Contains(fields[3], "copilot") {
				t.Errorf("detail should say the pid now belongs to a copilot process: %s", fields[3])
			}
		})
	}
}

// The same in the machine's own PID namespace, where the sidecar sees every
// process: root steers the next pid with ns_last_pid there too, racing the
// rest of the machine for it (retried).
func TestPIDReusedByAnotherCopilotHere(t *testing.T) {
	if os.Geteuid() != 0 || nestedPIDNamespace() {
		t.Skip("needs root in the machine's own PID namespace to steer ns_last_pid (CI runs as root)")
	}
	for _, format := range []string{"old", "new"} {
		t.Run(format, func(t *testing.T) {
			sd := t.TempDir()
			newSession(t, sd, "reused")
			newSession(t, sd, "elsewhere")
			args := []string{}
			if format == "old" {
				args = append(args, "--old")
			}
			var pid int
			for try := 0; ; try++ {
				first := startHolder(t, sd, "reused", args...)
				pid = first.pid
				first.killAndReap()
				old := time.Now().Add(-2 * time.Minute)
				touch(t, filepath.Join(sd, "reused", lockFileName(pid)), old)
				if format == "new" {
					touch(t, filepath.Join(sd, "reused", holdFileName(pid)), old)
				}
				restore := steerNextPID(pid)
				second := startHolder(t, sd, "elsewhere")
				restore()
				if second.pid == pid {
					break
				}
				if try == 5 {
					t.Skip("another process took the pid each time")
				}
				for _, n := range []string{lockFileName(pid), holdFileName(pid)} {
					os.Remove(filepath.Join(sd, "reused", n))
				}
			}
			h := mustSession(t, newEngine(t, sd, settle), "reused").Holders[0]
			want := ReasonPIDReused
			if format == "new" {
				want = ReasonHoldReleased
			}
			if h.Verdict != Stale || h.Reason != want || !strings.Contains(h.Detail, "copilot") {
				t.Errorf("got %s/%s, want stale/%s naming the copilot that has the pid now: %s", h.Verdict, h.Reason, want, h.Detail)
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// runNamespaceHelper runs inside the new namespaces (see above) and prints
// "verdict <verdict> <reason> <detail>".
func runNamespaceHelper() int {
	fail := func(f string, a ...any) int { fmt.Printf("FAIL "+f+"\n", a...); return 1 }
	sd, cli := os.Getenv("SESSIONLOCKS_TEST_STATE"), os.Getenv("SESSIONLOCKS_TEST_CLI")
	args := []string{"--state-dir", sd, "--session", "reused"}
	if os.Getenv(nsHelperEnv) == "old" {
		args = append(args, "--old")
	}
	first := exec.Command(cli, args...)
	out, _ := first.StdoutPipe()
	if err := first.Start(); err != nil {
		return fail("start: %v", err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "ready") {
		return fail("first CLI not ready: %q %v", line, err)
	}
	pid := first.Process.Pid
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	// Back-date the dead CLI's files so that the newcomer clearly started
	// after them: by more than the minute a CLI's clock may be off.
	old := time.Now().Add(-2 * time.Minute)
	os.Chtimes(filepath.Join(sd, "reused", lockFileName(pid)), old, old)
	os.Chtimes(filepath.Join(sd, "reused", holdFileName(pid)), old, old)

	if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
		return fail("ns_last_pid: %v", err)
	}
	second := exec.Command(cli, "--state-dir", sd, "--session", "elsewhere")
	sout, _ := second.StdoutPipe()
	if err := second.Start(); err != nil {
		return fail("start second: %v", err)
	}
	defer func() { second.Process.Kill(); second.Wait() }()
	if second.Process.Pid != pid {
		return fail("second copilot got pid %d, not the reused %d", second.Process.Pid, pid)
	}
	bufio.NewReader(sout).ReadString('\n')

	e := New(Options{StateDir: sd, Settle: settle, Logger: quiet})
	s, err := e.Judge(context.Background(), "reused")
	if err != nil || len(s.Holders) != 1 {
		return fail("session: %v %+v", err, s)
	}
	h := s.Holders[0]
	fmt.Printf("verdict %s %s %s\n", h.Verdict, h.Reason, h.Detail)
	return 0
}

// steerNextPID makes pid the next pid the machine hands out, and returns
// the function that puts the counter back where it was: every other process
// on the machine (other tests' among them) would otherwise be handed
// recently freed pids, the very ones they may hold for dead.
func steerNextPID(pid int) (restore func()) {
	const path = "/proc/sys/kernel/ns_last_pid"
	before, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strconv.Itoa(pid-1)), 0)
	return func() {
		last, _ := strconv.Atoi(strings.TrimSpace(string(before)))
		now, _ := os.ReadFile(path)
		if n, _ := strconv.Atoi(strings.TrimSpace(string(now))); n > last {
			last = n
		}
		os.WriteFile(path, []byte(strconv.Itoa(last)), 0)
	}
}
