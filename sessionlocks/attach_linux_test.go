package sessionlocks

// Who holds a session and whether anyone is still there, with real
// processes: a launcher that lives, one SIGKILLed while the engine runs,
// an engine started after it died, and a holder in a terminal (tmux).

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startLaunched runs the fake CLI under a shell that waits for it (the
// launcher), and returns the shell and the CLI's pid.
func startLaunched(t *testing.T, sd, id string) (launcher *exec.Cmd, pid int) {
	t.Helper()
	launcher = exec.Command("sh", "-c", `"$0" --state-dir "$1" --session "$2"; true`, fakeCLI, sd, id)
	line := startReady(t, launcher, func() {
		launcher.Process.Kill()
		launcher.Wait()
	})
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready ")))
	if err != nil {
		t.Fatalf("launcher said %q", line)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return launcher, pid
}

func listed(t *testing.T, e *Engine, id string) Holder {
	t.Helper()
	ss, err := e.List(context.Background(), ListOptions{IDs: []string{id}})
	if err != nil || len(ss[0].Holders) != 1 {
		t.Fatalf("%v %+v", err, ss)
	}
	return ss[0].Holders[0]
}

func TestLauncherAliveIsNotAnOrphan(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "s")
	launcher, _ := startLaunched(t, sd, "s")
	h := listed(t, newEngine(t, sd, settle), "s")
	if h.Launcher == nil || h.Launcher.PID != launcher.Process.Pid || !h.Launcher.Alive || !strings.HasPrefix(h.Launcher.Command, "sh -c") {
		t.Fatalf("launcher %+v, want pid %d (sh), alive", h.Launcher, launcher.Process.Pid)
	}
	if h.Orphaned == nil || *h.Orphaned {
		t.Fatalf("orphaned %v: its launcher runs", h.Orphaned)
	}
}

func TestLauncherKilledWhileTheEngineRuns(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "s")
	launcher, pid := startLaunched(t, sd, "s")
	e := newEngine(t, sd, settle)
	listed(t, e, "s") // the launcher is seen
	launcher.Process.Kill()
	launcher.Wait()
	waitFor(t, "the CLI to be handed to another parent", func() bool { return readProc(pid).ppid != launcher.Process.Pid })
	e.Invalidate("s") // as the watcher does when the launcher exits
	h := listed(t, e, "s")
	if h.Verdict != Live || h.Orphaned == nil || !*h.Orphaned || h.Launcher == nil || h.Launcher.Alive || h.Launcher.PID != launcher.Process.Pid {
		t.Fatalf("%s, orphaned %v, launcher %+v: want live, orphaned, its launcher remembered and gone (%s)", h.Verdict, h.Orphaned, h.Launcher, h.Attachment)
	}
	if !strings.Contains(h.Attachment, "nobody is attached") {
		t.Errorf("attachment %q", h.Attachment)
	}
	res, err := e.Reclaim(context.Background(), ReclaimOptions{IDs: []string{"s"}})
	if err != nil || res.Totals.Reclaimed != 0 || readProc(pid).state != procAlive {
		t.Fatalf("reclaimed %d (%v): an orphan is live", res.Totals.Reclaimed, err)
	}
}

func TestEngineStartedAfterTheLauncherDied(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "s")
	launcher, pid := startLaunched(t, sd, "s")
	launcher.Process.Kill()
	launcher.Wait()
	waitFor(t, "the CLI to be handed to another parent", func() bool { return readProc(pid).ppid != launcher.Process.Pid })
	h := listed(t, newEngine(t, sd, settle), "s")
	if h.Orphaned == nil || !*h.Orphaned {
		t.Fatalf("orphaned %v (%s): its parent now is %d", h.Orphaned, h.Attachment, readProc(pid).ppid)
	}
	if h.Launcher != nil {
		t.Errorf("launcher %+v: it was never seen, so it is not known", h.Launcher)
	}
	if s := mustSession(t, newEngine(t, sd, settle), "s"); s.State != StateInUse {
		t.Errorf("state %s", s.State)
	}
}

func TestHolderInATerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux unavailable")
	}
	sd := t.TempDir()
	newSession(t, sd, "s")
	sock := t.TempDir() + "/tmux"
	out := t.TempDir() + "/out"
	cmd := exec.Command("tmux", "-S", sock, "new-session", "-d", fakeCLI+" --state-dir "+sd+" --session s > "+out)
	if err := cmd.Run(); err != nil {
		t.Skip("tmux cannot start here:", err)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	var pid int
	waitFor(t, "the fake CLI in tmux", func() bool {
		b, _ := os.ReadFile(out)
		line, _ := bufio.NewReader(strings.NewReader(string(b))).ReadString('\n')
		pid, _ = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready ")))
		return pid > 0
	})
	time.Sleep(10 * time.Millisecond)
	h := listed(t, newEngine(t, sd, settle), "s")
	if !strings.HasPrefix(h.Terminal, "pts/") || h.Orphaned == nil || *h.Orphaned {
		t.Fatalf("terminal %q, orphaned %v (%s): want its pts named, not orphaned", h.Terminal, h.Orphaned, h.Attachment)
	}
}

func TestTTYName(t *testing.T) {
	for nr, want := range map[uint32]string{0: "", 136<<8 | 3: "pts/3", 137<<8 | 4: "pts/260", 4<<8 | 1: "tty1", 4<<8 | 64: "ttyS0", 136<<8 | 1<<20: "pts/256"} {
		if got := ttyName(nr); got != want {
			t.Errorf("ttyName(%#x) = %q, want %q", nr, got, want)
		}
	}
}

func TestIsLoader(t *testing.T) {
	for argv, want := range map[string]bool{
		"node /usr/lib/node_modules/@github/copilot/npm-loader.js --acp":                  true,
		`C:\Windows\system32\cmd.exe /d /s /c C:\Users\u\AppData\Roaming\npm\copilot.cmd`: true,
		"node /usr/lib/node_modules/@github/copilot/index.js":                             false,
		"/usr/lib/node_modules/@github/copilot-linux-x64/copilot":                         false,
		"bash": false,
	} {
		if got := isLoader(strings.Fields(argv)); got != want {
			t.Errorf("isLoader(%q) = %v", argv, got)
		}
	}
}
