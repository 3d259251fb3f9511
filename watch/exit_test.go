package watch

// The exit watcher of this system, on real processes.

import (
	"errors"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// The exit watcher awaits any process named by its pid and start time (a
// holder's, or another process a session depends on), refuses a start time
// that is not the pid's (a reused pid), and sends the pid once it exits;
// one removed is not sent.
func TestExitWatcher(t *testing.T) {
	exits := make(chan int, 4)
	ex := newExitWatcher(exits)
	defer ex.close()
	dir := t.TempDir()
	victim, removed := startCLI(t, dir, sessionID(0x70)), startCLI(t, dir, sessionID(0x71))
	start, err := sessionlocks.ProcessStart(victim.pid)
	if err != nil {
		t.Skipf("no start times here: %v", err)
	}
	if err := ex.add(victim.pid, start.Add(-time.Hour)); !errors.Is(err, errExited) && !errors.Is(err, errUnsupported) {
		t.Fatalf("add with another process's start time = %v, want errExited", err)
	}
	switch err := ex.add(victim.pid, start); {
	case errors.Is(err, errUnsupported):
		t.Skip("exits cannot be awaited here: they are polled")
	case err != nil:
		t.Fatal(err)
	}
	removedStart, err := sessionlocks.ProcessStart(removed.pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := ex.add(removed.pid, removedStart); err != nil {
		t.Fatal(err)
	}
	ex.remove(removed.pid)
	removed.cmd.Process.Kill()
	victim.cmd.Process.Kill()
	select {
	case pid := <-exits:
		if pid != victim.pid {
			t.Fatalf("exit of pid %d sent, want %d (pid %d was removed)", pid, victim.pid, removed.pid)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("no exit sent within %v", waitTimeout)
	}
	select {
	case pid := <-exits:
		t.Fatalf("exit of pid %d sent too (removed: %d)", pid, removed.pid)
	case <-time.After(200 * time.Millisecond):
	}
}
