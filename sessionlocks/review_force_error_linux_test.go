package sessionlocks

// Review: once Force has signalled, "it finishes the session and its
// answer says what it did" (docs/judging.md). A removal that fails after
// that (here a stale holder's .hold whose flock a process took between
// the judgement and the removal) makes Force return only an error, which
// the server answers as -32003 ("...; nothing was removed"): the IDE never
// learns that a CLI was terminated, nor which files went.

import (
	"context"
	"testing"
	"time"
)

func TestForceThatSignalledAnswersWhatItDidEvenIfARemovalFails(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	live := startHolder(t, sd, "s")
	dead := deadPID(t)
	old := time.Now().Add(-time.Minute)
	lock := writeLock(t, dir, dead, old)
	hold := writeHold(t, dir, dead, old)
	t.Cleanup(func() { testHookRemoval = nil })
	testHookRemoval = func(step removalStep, path string) {
		if step != stepDecided || path != lock {
			return
		}
		testHookRemoval = nil
		flockHolder(t, hold, 30)
		waitFor(t, "flock(1) to take the .hold", func() bool { return lockTableHolds(must(lstatID(hold))) })
	}
	e := newEngine(t, sd, settle)
	res, err := e.Force(context.Background(), "s", ForceOptions{Terminate: true, Grace: 3 * time.Second})
	if err != nil {
		t.Fatalf("Force = %v (signalled %v, exited %v, removed %d): it had signalled pid %d, and its answer must say so", err, res.Signalled, res.Exited, len(res.Removed), live.pid)
	}
}
