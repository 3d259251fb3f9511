package sessionlocks

// Review: forceResume with terminate is "stop it, then resume". A holder
// whose verdict is unknown may be a running CLI (one run through a wrapper
// sessionlocks does not recognise, one on a shared file system, one in WSL
// or a VM): terminate does not signal it, and then removes its files, so
// the session reads free while it may still write. Issue 24: terminate
// "never removes the files of a live holder it did not stop"; where
// liveness cannot be told, the same fail-safe applies.

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestTerminateKeepsTheFilesOfAnUnknownHolderItDidNotStop(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	// A running process, older than its lock, that does not look like the
	// CLI: unknown (unverified), as a CLI run through a wrapper reads.
	sl := startSleeper(t)
	lock := writeLock(t, dir, sl.Process.Pid, time.Time{})
	pastSettle(t)
	e := newEngine(t, sd, settle)
	s := mustSession(t, e, "s")
	if s.State != StateUnknown {
		t.Fatalf("setup: %s (%s), want unknown", s.State, s.Holders[0].Detail)
	}
	res, err := e.Force(context.Background(), "s", ForceOptions{Terminate: true, Grace: 0, Expect: s.Token()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Signalled) != 0 {
		t.Fatalf("signalled %v", res.Signalled)
	}
	if _, err := os.Lstat(lock); err != nil || res.Session.State == StateFree {
		t.Errorf("terminate did not stop pid %d (still running: %v) yet removed its lock: the session reads %s", sl.Process.Pid, readProc(sl.Process.Pid).state == procAlive, res.Session.State)
	}
}
