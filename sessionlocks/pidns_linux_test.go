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
			wantReason := ReasonPIDReused
			if format == "new" {
				wantReason = ReasonHoldReleased
			}
			if Verdict(fields[1]) != Stale || Reason(fields[2]) != wantReason {
				t.Errorf("got %s/%s, want stale/%s: %s", fields[1], fields[2], wantReason, fields[3])
			}
			if !strings.Contains(fields[3], "copilot") {
				t.Errorf("detail should say the pid now belongs to a copilot process: %s", fields[3])
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
	// Back-date the dead CLI's files so that the newcomer clearly started after them.
	old := time.Now().Add(-3 * time.Second)
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
	s, err := e.Session(context.Background(), "reused")
	if err != nil || len(s.Holders) != 1 {
		return fail("session: %v %+v", err, s)
	}
	h := s.Holders[0]
	fmt.Printf("verdict %s %s %s\n", h.Verdict, h.Reason, h.Detail)
	return 0
}
