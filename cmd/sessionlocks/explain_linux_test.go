package main

// Live holders through explain and list: who started them, where they run,
// whether anyone is still attached, and what to do about them (issues 24
// and 27). Linux: owners and orphans are proven there from /proc.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/testbin"
)

// startLaunched runs the fake CLI cli (as the CLI: from where npm puts it) on a
// session under a shell that waits for it, in a session of its own (no
// terminal), and returns the shell and the CLI's pid.
func startLaunched(t *testing.T, cli, state, id string, args ...string) (*exec.Cmd, int) {
	t.Helper()
	sh := exec.Command("sh", append([]string{"-c", `"$@"; true`, "sh", cli, "--state-dir", state, "--session", id}, args...)...)
	sh.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, _ := sh.StdoutPipe()
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	line, err := bufio.NewReader(out).ReadString('\n')
	if _, err2 := fmt.Sscanf(line, "ready %d", &pid); err != nil || err2 != nil {
		t.Fatalf("fake CLI: %q %v", line, err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL); sh.Process.Kill(); sh.Wait() })
	return sh, pid
}

// TestExplainLiveHolders: explain says who started a live holder, its
// terminal and whether it is an orphan, and never advises taking a live
// session over while its CLI runs (issues 24 and 27): close it where it
// runs, or terminate what is proven to hold it.
func TestExplainLiveHolders(t *testing.T) {
	bin := serveBinary(t)
	state := t.TempDir()
	const owned, unproven, orphan = "0a000000-0000-4000-8000-000000000001", "0b000000-0000-4000-8000-000000000002", "0c000000-0000-4000-8000-000000000003"
	for _, id := range []string{owned, unproven, orphan} {
		if err := writeWorkspace(state, id, "test "+id[:2], "/src/"+id[:2], time.Now().Add(-time.Hour), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	cli, err := testbin.FakeCLI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := startLaunched(t, cli, state, owned)
	// A holder whose lock names another process (a sleep): live by the
	// .hold's flock, but nothing proves which process holds it.
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	startLaunched(t, cli, state, unproven, "--name-pid", strconv.Itoa(sleep.Process.Pid))
	old := time.Now().Add(-time.Minute) // past the settle window: the .hold is probed
	for _, ext := range []string{".lock", ".hold"} {
		if err := os.Chtimes(fmt.Sprintf("%s/%s/inuse.%d%s", state, unproven, sleep.Process.Pid, ext), old, old); err != nil {
			t.Fatal(err)
		}
	}
	// An orphan: its launcher SIGKILLed before this sidecar started.
	orphanSh, orphanPID := startLaunched(t, cli, state, orphan)
	orphanSh.Process.Kill()
	orphanSh.Wait()
	for deadline := time.Now().Add(10 * time.Second); parent(orphanPID) == orphanSh.Process.Pid && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}

	explain := func(id string) string {
		t.Helper()
		stdout, stderr, code := runBin(t, bin, "", "explain", "--state-dir", state, id[:2])
		if code != 0 {
			t.Fatalf("explain %s: exit %d: %s", id, code, stderr)
		}
		if strings.Contains(stdout, "takes the session over") || regexp.MustCompile("forceResume "+id+"`").MatchString(stdout) {
			t.Errorf("explain advises taking a live session over while it runs:\n%s", stdout)
		}
		t.Logf("explain %s:\n%s", id[:2], stdout)
		return stdout
	}
	x := explain(owned)
	for _, want := range []string{
		fmt.Sprintf("launcher: pid %d, still running: sh -c", sh.Process.Pid),
		"terminal: none",
		fmt.Sprintf("attached: Started by pid %d (sh -c", sh.Process.Pid),
		"Close this CLI where it runs: pid", "(copilot) in /src/0a, started by pid",
		"forceResume " + owned + " terminate=true` stops pid",
	} {
		if !strings.Contains(x, want) {
			t.Errorf("explain of a holder whose launcher runs lacks %q:\n%s", want, x)
		}
	}
	x = explain(unproven)
	for _, want := range []string{"owner:    none proven: ", "Close this CLI where it runs: pid " + strconv.Itoa(sleep.Process.Pid) + " (sleep) in /src/0b", "sessionlocks will not stop it"} {
		if !strings.Contains(x, want) {
			t.Errorf("explain of a holder without an owner lacks %q:\n%s", want, x)
		}
	}
	if strings.Contains(x, "forceResume") {
		t.Errorf("explain advises forceResume for a live holder whose owner is not proven:\n%s", x)
	}
	x = explain(orphan)
	for _, want := range []string{"inUse*: In use by pid", "left running after its launcher exited", "launcher: unknown", "nobody is attached", "Nobody is attached to this CLI: pid", "forceResume " + orphan + " terminate=true"} {
		if !strings.Contains(x, want) {
			t.Errorf("explain of an orphan lacks %q:\n%s", want, x)
		}
	}

	checkListOrphans(t, bin, state, orphan, owned, sh.Process.Pid)
}

// checkListOrphans: list marks the orphan (only it), and its JSON has the
// wire's fields.
func checkListOrphans(t *testing.T, bin, state, orphan, owned string, launcher int) {
	t.Helper()
	stdout, _, _ := runBin(t, bin, "", "list", "--state-dir", state)
	if !regexp.MustCompile(`(?m)^0c000000 .* inUse\* `).MatchString(stdout) || !strings.Contains(stdout, "* left running after its launcher exited") ||
		regexp.MustCompile(`(?m)^0a000000 .* inUse\*`).MatchString(stdout) {
		t.Errorf("list does not mark the orphan (only it):\n%s", stdout)
	}
	stdout, _, _ = runBin(t, bin, "", "list", "--json", "--state-dir", state)
	var l struct {
		Sessions []struct {
			ID      string
			Holders []struct {
				Orphaned *bool
				Launcher *struct {
					PID   int
					Alive bool
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatal(err)
	}
	for _, s := range l.Sessions {
		h := s.Holders[0]
		switch {
		case h.Orphaned == nil:
			t.Errorf("%s: no orphaned in list --json", s.ID)
		case s.ID == orphan && (!*h.Orphaned || h.Launcher != nil):
			t.Errorf("%s: orphaned %v, launcher %+v: want an orphan whose launcher was never seen", s.ID, *h.Orphaned, h.Launcher)
		case s.ID == owned && (*h.Orphaned || h.Launcher == nil || h.Launcher.PID != launcher || !h.Launcher.Alive):
			t.Errorf("%s: orphaned %v, launcher %+v: want not orphaned, launched by %d", s.ID, *h.Orphaned, h.Launcher, launcher)
		}
	}
}

// parent is pid's parent, from /proc.
func parent(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	var ppid int
	fmt.Sscanf(string(b[bytes.LastIndexByte(b, ')')+1:]), " %c %d", new(byte), &ppid)
	return ppid
}
