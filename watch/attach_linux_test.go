package watch

// Pushes that issues of their own ask for: a holder's launcher exiting
// makes it an orphan within a second, and a CLI SIGKILLed within its settle
// window reads stale within a second, not after the window.

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

func TestLauncherExitPushesAnOrphan(t *testing.T) {
	dir := t.TempDir()
	id := sessionID(27)
	mkSession(t, dir, id, "launched")
	f := start(t, dir, fixtureOpts{mode: ModeNotify})
	launcher := exec.Command("sh", "-c", `"$0" --state-dir "$1" --session "$2"; true`, fakeCLI, dir, id)
	out, _ := launcher.StdoutPipe()
	launcher.Stderr = os.Stderr
	if err := launcher.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "ready ")))
	if err != nil {
		t.Fatalf("launcher said %q", line)
	}
	t.Cleanup(func() { launcher.Process.Kill(); launcher.Wait(); syscall.Kill(pid, syscall.SIGKILL) })
	f.rec.waitSession(t, id, "a live holder with its launcher", func(s sessionlocks.Session) bool {
		h, ok := holder(s, pid)
		return ok && h.Verdict == sessionlocks.Live && h.Launcher != nil && h.Launcher.Alive
	})
	launcher.Process.Kill()
	killed := time.Now()
	launcher.Wait()
	s := f.rec.waitSession(t, id, "the holder orphaned", func(s sessionlocks.Session) bool {
		h, ok := holder(s, pid)
		return ok && h.Orphaned != nil && *h.Orphaned
	})
	if d := time.Since(killed); d > time.Second {
		t.Errorf("orphan pushed %v after the launcher died, want within 1 s", d)
	}
	if s.State != sessionlocks.StateInUse {
		t.Errorf("state %s: an orphan is live", s.State)
	}
}

func TestYoungKillPushedStaleWithinASecond(t *testing.T) {
	dir := t.TempDir()
	id := sessionID(26)
	mkSession(t, dir, id, "young")
	f := start(t, dir, fixtureOpts{mode: ModeNotify, settle: time.Hour}) // the lock stays young throughout
	c := startCLI(t, dir, id)
	f.rec.waitState(t, id, sessionlocks.StateInUse)
	c.cmd.Process.Kill()
	killed := time.Now()
	c.cmd.Wait()
	s := f.rec.waitState(t, id, sessionlocks.StateStale)
	if d := time.Since(killed); d > time.Second {
		t.Errorf("stale pushed %v after the kill, want within 1 s", d)
	}
	if h, _ := holder(s, c.pid); h.Reason != sessionlocks.ReasonProcessExited {
		t.Errorf("reason %s, want process-exited", h.Reason)
	}
}
