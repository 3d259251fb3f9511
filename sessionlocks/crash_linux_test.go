package sessionlocks

// Removals killed at every step, as SIGKILL, OOM or a power cut kill a
// sidecar: a real process (this test binary re-executed) reclaims or forces
// a session and kills itself after one step; the next engine to read the
// session must put back what might be a live holder's and remove what is
// proven stale, leaving nothing set aside. And a new holder that takes the
// same pid and inode meanwhile never loses its files.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func init() {
	helpers["crash-remover"] = helperCrashRemover
}

// helperCrashRemover reclaims (or, with CRASH_FORCE, forces) the session
// CRASH_SESSION of CRASH_STATE_DIR and SIGKILLs itself right after the
// step CRASH_STEP of its first removal.
func helperCrashRemover() int {
	step := removalStep(os.Getenv("CRASH_STEP"))
	testHookRemoval = func(s removalStep, path string) {
		if f, pid, ok := strings.Cut(os.Getenv("CRASH_REWRITE"), "="); ok && s == stepDecided {
			os.WriteFile(f, []byte(pid+"\n"), 0o644) // the CLI that has the pid now writes its lock
		}
		if s == step {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	e := New(Options{StateDir: os.Getenv("CRASH_STATE_DIR"), Settle: settle, Logger: quiet, Now: pastSettleClock})
	id := os.Getenv("CRASH_SESSION")
	if os.Getenv("CRASH_FORCE") != "" {
		e.Force(context.Background(), id, ForceOptions{})
	} else {
		e.Reclaim(context.Background(), ReclaimOptions{IDs: []string{id}})
	}
	return 0 // the step was never reached
}

// crashAt runs the crash remover and waits for it to die; it reports
// whether it died at the step (rather than finishing).
func crashAt(t *testing.T, sd, id string, step removalStep, force bool, env ...string) bool {
	t.Helper()
	env = append(env, "CRASH_STATE_DIR="+sd, "CRASH_SESSION="+id, "CRASH_STEP="+string(step))
	if force {
		env = append(env, "CRASH_FORCE=1")
	}
	err := helperCmd("crash-remover", env).Run()
	ee, ok := err.(*exec.ExitError)
	return ok && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
}

func asides(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if isAsideName(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

var crashSteps = []removalStep{stepDecided, stepHoldLocked, stepSetAside, stepChecked, stepUnlinked}

func TestCrashDuringReclaimOfAStaleHolder(t *testing.T) {
	for _, step := range crashSteps {
		t.Run(string(step), func(t *testing.T) {
			sd := t.TempDir()
			dir := newSession(t, sd, "s")
			pid := deadPID(t)
			old := sinceBoot(t, time.Minute)
			lock, hold := writeLock(t, dir, pid, old), writeHold(t, dir, pid, old)
			if !crashAt(t, sd, "s", step, false) {
				t.Fatalf("the remover did not reach %s", step)
			}
			if step == stepSetAside && len(asides(t, dir)) != 1 {
				t.Fatalf("after a crash at %s: set aside %v, want the .hold", step, asides(t, dir))
			}
			// The next run, whatever reads the session first: a listing.
			ss, err := newEngine(t, sd, settle).List(context.Background(), ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if left := asides(t, dir); len(left) != 0 {
				t.Fatalf("set-aside files survived the next listing: %v", left)
			}
			if step == stepDecided || step == stepHoldLocked {
				// Nothing was moved: the session reads stale, as before.
				if !exists(hold) || !exists(lock) || ss[0].State != StateStale {
					t.Errorf("lock there %v, hold there %v, state %s", exists(lock), exists(hold), ss[0].State)
				}
				return
			}
			if exists(hold) {
				t.Errorf("the stale .hold is still there")
			}
			if exists(lock) != (ss[0].State == StateStale) {
				t.Errorf("lock there %v, state %s", exists(lock), ss[0].State)
			}
			if ss[0].State != StateFree && ss[0].State != StateStale {
				t.Errorf("state %s after recovery, want free or stale", ss[0].State)
			}
		})
	}
}

// TestCrashAfterSettingAsideALockARewroteMeanwhile is the case that lost a
// live session: the lock judged stale (its pid reused) is rewritten by the
// CLI that now has the pid, just before the remover sets it aside; the
// remover dies before its check would have put it back. The next listing
// must show the session in use.
func TestCrashAfterSettingAsideALockARewroteMeanwhile(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	cli := startHolder(t, sd, "decoy", "--old") // a live CLI: the pid's new owner
	start := readProc(cli.pid).start
	written := start.Add(-90 * time.Second) // beyond the minute a CLI's clock may be off
	if b, _ := bootTime(); written.Before(b.Add(2 * time.Second)) {
		t.Skip("the machine booted too recently")
	}
	lock := writeLock(t, dir, cli.pid, written)
	if s := mustSession(t, newEngine(t, sd, settle), "s"); s.Holders[0].Reason != ReasonPIDReused {
		t.Fatalf("planted lock judged %s, want pid-reused", s.Holders[0].Reason)
	}
	if !crashAt(t, sd, "s", stepSetAside, false, "CRASH_REWRITE="+lock+"="+itoa(cli.pid)) {
		t.Fatal("the remover did not reach the set-aside step")
	}
	if exists(lock) || len(asides(t, dir)) != 1 {
		t.Fatalf("lock there %v, set aside %v: the crash did not leave the lock set aside", exists(lock), asides(t, dir))
	}
	ss, err := newEngine(t, sd, settle).List(context.Background(), ListOptions{IDs: []string{"s"}})
	if err != nil {
		t.Fatal(err)
	}
	if ss[0].State != StateInUse || !exists(lock) || len(asides(t, dir)) != 0 {
		t.Fatalf("session %s, lock there %v, set aside %v: want the live lock put back", ss[0].State, exists(lock), asides(t, dir))
	}
}

func TestCrashDuringForceOfALiveHolder(t *testing.T) {
	// The user took the session over (forceResume without terminate); the
	// sidecar died mid-removal and never answered. What it set aside is put
	// back: the holder is live, and nobody was told it was removed.
	for _, step := range []removalStep{stepSetAside, stepChecked} {
		t.Run(string(step), func(t *testing.T) {
			sd := t.TempDir()
			newSession(t, sd, "s")
			h := startHolder(t, sd, "s")
			pastSettle(t)
			if !crashAt(t, sd, "s", step, true) {
				t.Fatalf("the remover did not reach %s", step)
			}
			s := mustSession(t, newEngine(t, sd, settle), "s")
			if s.State != StateInUse || len(asides(t, filepath.Join(sd, "s"))) != 0 {
				t.Fatalf("session %s, set aside %v: want the live holder's files back", s.State, asides(t, filepath.Join(sd, "s")))
			}
			if !exists(filepath.Join(sd, "s", lockFileName(h.pid))) {
				t.Error("its .lock was not put back")
			}
		})
	}
}

func TestRecoveryLeavesARunningRemoversWorkAlone(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	sl := startSleeper(t)
	pid := deadPID(t)
	writeLock(t, dir, pid, sinceBoot(t, time.Minute))
	// Set aside by a remover that still runs (the sleeper stands for it).
	start := readProc(sl.Process.Pid).start
	name := asidePrefix + "aside." + itoa(sl.Process.Pid) + "." + itoa(int(start.UnixMilli())) + "." + lockFileName(pid)
	if err := os.Rename(filepath.Join(dir, lockFileName(pid)), filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, sd, settle)
	if s := mustSession(t, e, "s"); s.State != StateUnknown || !slices.Contains(asides(t, dir), name) {
		t.Fatalf("session %s, set aside %v: a running remover's file must be left, and the session not read free", s.State, asides(t, dir))
	}
	sl.Process.Kill()
	sl.Wait()
	if s := mustSession(t, e, "s"); s.State != StateFree || len(asides(t, dir)) != 0 {
		t.Fatalf("after the remover died: session %s, set aside %v; want the stale lock removed", s.State, asides(t, dir))
	}
}

func TestRecoveryOfAnOlderBuildsNamelessFiles(t *testing.T) {
	t.Run("a .lock names its pid: a live CLI's is put back", func(t *testing.T) {
		sd := t.TempDir()
		dir := newSession(t, sd, "s")
		cli := startHolder(t, sd, "decoy", "--old")
		os.WriteFile(filepath.Join(dir, ".sessionlocks-removing-0123456789abcdef"), []byte(itoa(cli.pid)+"\n"), 0o644)
		if s := mustSession(t, newEngine(t, sd, settle), "s"); s.State != StateInUse || len(asides(t, dir)) != 0 || !exists(filepath.Join(dir, lockFileName(cli.pid))) {
			t.Fatalf("session %s, set aside %v", s.State, asides(t, dir))
		}
	})
	t.Run("a dead pid's .lock is removed", func(t *testing.T) {
		sd := t.TempDir()
		dir := newSession(t, sd, "s")
		aside := filepath.Join(dir, ".sessionlocks-removing-0123456789abcdef")
		os.WriteFile(aside, []byte(itoa(deadPID(t))+"\n"), 0o644)
		touch(t, aside, sinceBoot(t, time.Minute))
		if s := mustSession(t, newEngine(t, sd, settle), "s"); s.State != StateFree || len(asides(t, dir)) != 0 {
			t.Fatalf("session %s, set aside %v", s.State, asides(t, dir))
		}
	})
	t.Run("an empty file whose flock is held is a live .hold: put back", func(t *testing.T) {
		sd := t.TempDir()
		dir := newSession(t, sd, "s")
		aside := filepath.Join(dir, ".sessionlocks-removing-fedcba9876543210")
		os.WriteFile(aside, nil, 0o644)
		flockHolder(t, aside, 30)
		waitFor(t, "flock(1) to take it", func() bool { return lockTableHolds(must(lstatID(aside))) })
		s := mustSession(t, newEngine(t, sd, settle), "s")
		if s.State != StateInUse || len(asides(t, dir)) != 0 {
			t.Fatalf("session %s, set aside %v", s.State, asides(t, dir))
		}
	})
	t.Run("an empty file nobody holds is stale: removed", func(t *testing.T) {
		sd := t.TempDir()
		dir := newSession(t, sd, "s")
		os.WriteFile(filepath.Join(dir, ".sessionlocks-removing-fedcba9876543210"), nil, 0o644)
		if s := mustSession(t, newEngine(t, sd, settle), "s"); s.State != StateFree || len(asides(t, dir)) != 0 {
			t.Fatalf("session %s, set aside %v", s.State, asides(t, dir))
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestSamePIDAndInodeNeverLosesTheNewHolder: a stale .lock and .hold of pid
// P; a new holder that got pid P opens and flocks the very same .hold (same
// inode, mtime and size) between the judgement and the removal. Whichever
// gets the .hold's flock first, nothing the new holder has is lost.
func TestSamePIDAndInodeNeverLosesTheNewHolder(t *testing.T) {
	setup := func(t *testing.T) (sd, lock, hold string) {
		sd = t.TempDir()
		dir := newSession(t, sd, "s")
		pid := deadPID(t)
		old := sinceBoot(t, time.Minute)
		return sd, writeLock(t, dir, pid, old), writeHold(t, dir, pid, old)
	}
	t.Run("the new holder flocks it first: both files stay", func(t *testing.T) {
		sd, lock, hold := setup(t)
		var holder *exec.Cmd
		testHookRemoval = func(step removalStep, path string) {
			if step == stepDecided && holder == nil {
				holder = flockHolder(t, hold, 30)
				waitFor(t, "flock(1) to take the .hold", func() bool { return lockTableHolds(must(lstatID(hold))) })
			}
		}
		t.Cleanup(func() { testHookRemoval = nil })
		res, err := newEngine(t, sd, settle).Reclaim(context.Background(), ReclaimOptions{IDs: []string{"s"}})
		if err != nil {
			t.Fatal(err)
		}
		if !exists(lock) || !exists(hold) || len(res.Reclaimed) != 0 || len(res.Failed) != 1 {
			t.Fatalf("lock there %v, hold there %v, reclaimed %d, failed %+v", exists(lock), exists(hold), len(res.Reclaimed), res.Failed)
		}
	})
	t.Run("the remover flocks it first: the new holder cannot take it", func(t *testing.T) {
		sd, lock, hold := setup(t)
		refused := false
		testHookRemoval = func(step removalStep, path string) {
			if step == stepHoldLocked {
				// flock -n fails at once while the remover holds it: a real
				// CLI then refuses to open the session.
				refused = exec.Command("flock", "-xn", hold, "true").Run() != nil
			}
		}
		t.Cleanup(func() { testHookRemoval = nil })
		if _, err := newEngine(t, sd, settle).Reclaim(context.Background(), ReclaimOptions{IDs: []string{"s"}}); err != nil {
			t.Fatal(err)
		}
		if !refused || exists(lock) || exists(hold) {
			t.Fatalf("the new holder took the flock: %v; lock there %v, hold there %v", !refused, exists(lock), exists(hold))
		}
	})
}

func TestClockFilesOfDeadMeasurersAreCleared(t *testing.T) {
	sd := t.TempDir()
	dir := filepath.Join(sd, opLockDir)
	os.Mkdir(dir, 0o700)
	dead := filepath.Join(dir, clockPrefix+itoa(deadPID(t))+".1700000000000.ab12cd34")
	older := filepath.Join(dir, ".sessionlocks-clock-0123456789abcdef")
	os.WriteFile(dead, nil, 0o600)
	os.WriteFile(older, nil, 0o600)
	touch(t, older, time.Now().Add(-time.Hour))
	if _, err := measureSkew(sd); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left in the operation-lock dir: %v", ents)
	}
}

func TestADryRunsRecoveryRemovesNothing(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	stale := filepath.Join(dir, ".sessionlocks-removing-fedcba9876543210")
	os.WriteFile(stale, nil, 0o644) // an older build's set-aside .hold, nobody's
	lock := filepath.Join(dir, ".sessionlocks-removing-0123456789abcdef")
	os.WriteFile(lock, []byte(itoa(deadPID(t))+"\n"), 0o644) // and a dead pid's .lock
	touch(t, lock, sinceBoot(t, time.Minute))
	e := newEngine(t, sd, settle)
	if _, err := e.Reclaim(context.Background(), ReclaimOptions{IDs: []string{"s"}, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if !exists(stale) {
		t.Fatal("a dry run removed a set-aside file")
	}
	for _, f := range asides(t, dir) {
		if f == filepath.Base(lock) {
			t.Fatal("the dry run did not put the dead pid's .lock back under its name")
		}
	}
	if _, err := e.Reclaim(context.Background(), ReclaimOptions{IDs: []string{"s"}}); err != nil {
		t.Fatal(err)
	}
	if left := asides(t, dir); len(left) != 0 || exists(filepath.Join(dir, "inuse."+itoa(deadPID(t))+".lock")) {
		t.Fatalf("after a real reclaim: set aside %v", left)
	}
}
