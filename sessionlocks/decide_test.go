//go:build unix

package sessionlocks

// Mutations that do exactly what the user decided: Force with the token of
// the judgement the user saw, a holder that survives SIGTERM, cancellation,
// and removals that cannot take a file other than the one judged or reach
// outside the state dir. Unix only: most terminate a holder (SIGTERM, which
// Windows does not offer) or hold a lock with flock(1).

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashedSession makes session s hold a SIGKILLed CLI's .lock and .hold,
// past the settle window, and returns the engine and the judgement a user
// would see (stale) with its token.
func crashedSession(t *testing.T) (sd string, e *Engine, seen Session) {
	t.Helper()
	sd = t.TempDir()
	newSession(t, sd, "s")
	startHolder(t, sd, "s").killAndReap()
	pastSettle(t)
	e = newEngine(t, sd, settle)
	seen = mustSession(t, e, "s")
	if seen.State != StateStale {
		t.Fatalf("session is %s, want stale", seen.State)
	}
	return sd, e, seen
}

func TestForceExpectRefusesHoldersTheUserDidNotSee(t *testing.T) {
	ctx := context.Background()
	t.Run("a CLI opened the session after it was judged", func(t *testing.T) {
		sd, e, seen := crashedSession(t)
		for i := range 5 {
			fresh := startHolder(t, sd, "s")
			_, err := e.Force(ctx, "s", ForceOptions{Expect: seen.Token(), Terminate: true})
			var ce *ChangedError
			if !errors.As(err, &ce) {
				t.Fatalf("try %d: Force = %v, want a ChangedError", i, err)
			}
			if !slices.ContainsFunc(ce.Session.Holders, func(h Holder) bool { return h.PID == fresh.pid && h.Verdict == Live }) {
				t.Errorf("the fresh judgement %+v does not show the new CLI", ce.Session.Holders)
			}
			for _, f := range []string{lockFileName(fresh.pid), holdFileName(fresh.pid)} {
				if !exists(filepath.Join(sd, "s", f)) {
					t.Fatalf("try %d: the new CLI's %s was removed", i, f)
				}
			}
			if readProc(fresh.pid).state != procAlive {
				t.Fatalf("try %d: the new CLI was signalled", i)
			}
			fresh.killAndReap()
		}
	})
	t.Run("the new CLI holds the operation lock while it opens, and Force waits behind it", func(t *testing.T) {
		sd, e, seen := crashedSession(t)
		cmd := exec.Command(fakeCLI, "--state-dir", sd, "--session", "s", "--hold-delay", "300ms")
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		// Its .lock is written: it holds the operation lock until its .hold
		// is flocked, 300 ms later.
		waitFor(t, "the new CLI's .lock", func() bool { return exists(filepath.Join(sd, "s", lockFileName(cmd.Process.Pid))) })
		_, err := e.Force(ctx, "s", ForceOptions{Expect: seen.Token()})
		if !errors.Is(err, ErrChanged) {
			t.Fatalf("Force = %v, want ErrChanged", err)
		}
		bufio.NewReader(out).ReadString('\n')
		if !exists(filepath.Join(sd, "s", holdFileName(cmd.Process.Pid))) {
			t.Fatal("the new CLI's .hold is gone")
		}
	})
	t.Run("the holders the token names are taken over", func(t *testing.T) {
		sd := t.TempDir()
		newSession(t, sd, "s")
		live := startHolder(t, sd, "s")
		e := newEngine(t, sd, settle)
		res, err := e.Force(ctx, "s", ForceOptions{Expect: mustSession(t, e, "s").Token()})
		if err != nil || len(res.Removed) != 1 || res.Removed[0].PID != live.pid {
			t.Fatalf("Force = %+v, %v; want the live holder the user saw removed", res.Removed, err)
		}
	})
	t.Run("a malformed token admits nothing", func(t *testing.T) {
		sd, e, _ := crashedSession(t)
		if _, err := e.Force(ctx, "s", ForceOptions{Expect: "v2:whatever"}); !errors.Is(err, ErrChanged) {
			t.Fatalf("Force = %v, want ErrChanged", err)
		}
		if len(mustSession(t, e, "s").Holders) != 1 {
			t.Fatal("something was removed")
		}
		_ = sd
	})
}

func TestForceKeepsHoldersThatAppearWhileItWaits(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "s")
	a := startHolder(t, sd, "s", "--ignore-term")
	e := newEngine(t, sd, settle)
	var b *exec.Cmd
	e.beforeSignal = func(*Owner) {
		// B opens the session as soon as Force lets go of the operation
		// lock to wait for A.
		b = exec.Command(fakeCLI, "--state-dir", sd, "--session", "s")
		if err := b.Start(); err != nil {
			t.Error(err)
		}
	}
	res, err := e.Force(context.Background(), "s", ForceOptions{Terminate: true, Grace: time.Second})
	if b != nil {
		t.Cleanup(func() { b.Process.Kill(); b.Wait() })
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.StillRunning, []int{a.pid}) {
		t.Fatalf("still running %v, want [%d]", res.StillRunning, a.pid)
	}
	for _, pid := range []int{a.pid, b.Process.Pid} {
		if !exists(filepath.Join(sd, "s", lockFileName(pid))) || !exists(filepath.Join(sd, "s", holdFileName(pid))) {
			t.Errorf("pid %d lost its files", pid)
		}
		if !slices.ContainsFunc(res.Kept, func(h Holder) bool { return h.PID == pid }) {
			t.Errorf("pid %d not in kept %+v", pid, res.Kept)
		}
	}
}

func TestForceSurvivorKeepsItsLockUnlessKilled(t *testing.T) {
	for _, kill := range []bool{false, true} {
		t.Run(map[bool]string{false: "SIGTERM only", true: "then SIGKILL"}[kill], func(t *testing.T) {
			sd := t.TempDir()
			newSession(t, sd, "s")
			a := startHolder(t, sd, "s", "--ignore-term")
			res, err := newEngine(t, sd, settle).Force(context.Background(), "s", ForceOptions{Terminate: true, Kill: kill, Grace: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			lock := filepath.Join(sd, "s", lockFileName(a.pid))
			if !slices.Equal(res.Signalled, []int{a.pid}) {
				t.Fatalf("signalled %v, want [%d]", res.Signalled, a.pid)
			}
			if !kill {
				if !slices.Equal(res.StillRunning, []int{a.pid}) || len(res.Exited) != 0 || !exists(lock) || res.Session.State != StateInUse {
					t.Fatalf("still running %v exited %v lock kept %v state %s: a live holder lost its lock", res.StillRunning, res.Exited, exists(lock), res.Session.State)
				}
				return
			}
			if !slices.Equal(res.Killed, []int{a.pid}) || !slices.Equal(res.Exited, []int{a.pid}) || exists(lock) || res.Session.State != StateFree {
				t.Fatalf("killed %v exited %v lock kept %v state %s", res.Killed, res.Exited, exists(lock), res.Session.State)
			}
		})
	}
}

func TestCancelledForceDoesNothing(t *testing.T) {
	t.Run("cancelled while it waits for the operation lock", func(t *testing.T) {
		sd := t.TempDir()
		newSession(t, sd, "s")
		live := startHolder(t, sd, "s")
		holdOpLock(t, sd, "s")
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := newEngine(t, sd, settle).Force(ctx, "s", ForceOptions{Terminate: true, Grace: time.Second})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Force = %v, want context.Canceled", err)
		}
		if readProc(live.pid).state != procAlive || !exists(filepath.Join(sd, "s", lockFileName(live.pid))) {
			t.Fatal("a cancelled Force signalled or removed something")
		}
	})
	t.Run("cancelled while another Force of the session runs", func(t *testing.T) {
		sd := t.TempDir()
		newSession(t, sd, "s")
		startHolder(t, sd, "s")
		holdOpLock(t, sd, "s")
		e := newEngine(t, sd, settle)
		// The first Force holds the session while it waits (half a second)
		// for the operation lock flock(1) holds; the second, cancelled, must
		// return without waiting for it.
		order := make(chan string, 2)
		e.beforeOpLock = func() {
			e.beforeOpLock = nil
			go func() {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if _, err := e.Force(ctx, "s", ForceOptions{}); !errors.Is(err, context.Canceled) {
					t.Errorf("Force = %v, want context.Canceled", err)
				}
				order <- "cancelled"
			}()
		}
		e.Force(context.Background(), "s", ForceOptions{})
		order <- "first"
		if first := <-order; first != "cancelled" {
			t.Fatal("a cancelled Force waited for the one before it to finish")
		}
	})
	t.Run("cancelled once it has signalled: it finishes and says what it did", func(t *testing.T) {
		sd := t.TempDir()
		newSession(t, sd, "s")
		live := startHolder(t, sd, "s")
		e := newEngine(t, sd, settle)
		ctx, cancel := context.WithCancel(context.Background())
		e.beforeSignal = func(*Owner) { cancel() }
		res, err := e.Force(ctx, "s", ForceOptions{Terminate: true, Grace: 3 * time.Second})
		if err != nil {
			t.Fatalf("Force = %v, want its result: it had acted", err)
		}
		if !slices.Equal(res.Exited, []int{live.pid}) || res.Session.State != StateFree {
			t.Fatalf("exited %v, session %s: want the signalled CLI gone and the session free", res.Exited, res.Session.State)
		}
	})
}

// holdOpLock holds session id's operation lock with flock(1) for the test.
func holdOpLock(t *testing.T, sd, id string) {
	t.Helper()
	dir := filepath.Join(sd, ".session-operation-locks")
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, id+".lock")
	flockHolder(t, path, 60)
	waitFor(t, "flock(1) to take the lock", func() bool {
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer f.Close()
		return tryLock(f) == errLockBusy
	})
}

func TestRemovalNeverTakesAFileRecreatedMeanwhile(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	pid := deadPID(t)
	old := time.Now().Add(-time.Minute)
	writeLock(t, dir, pid, old)
	hold := writeHold(t, dir, pid, old)
	var recreated fileID
	testHookRemoval = func(step removalStep, path string) {
		if step != stepHoldLocked || path != hold {
			return
		}
		// A CLI that reused the pid re-creates its .hold between the
		// judgement and the removal (a CLI that has not taken the
		// operation lock).
		os.Remove(path)
		os.WriteFile(path, nil, 0o644)
		recreated, _ = lstatID(path)
	}
	t.Cleanup(func() { testHookRemoval = nil })
	res, err := newEngine(t, sd, settle).Reclaim(context.Background(), ReclaimOptions{IDs: []string{"s"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failed) != 1 || !errors.Is(res.Failed[0].Err, errChanged) {
		t.Errorf("failed %+v, want the .hold reported changed", res.Failed)
	}
	got, err := lstatID(hold)
	if err != nil || got.ino != recreated.ino {
		t.Fatalf("the re-created .hold is gone or replaced (%v)", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".sessionlocks-") {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

func TestOperationLockDirSwappedForASymlink(t *testing.T) {
	sd := t.TempDir()
	outside := t.TempDir()
	ops := filepath.Join(sd, ".session-operation-locks")
	t.Run("a symlink in its place", func(t *testing.T) {
		dir := newSession(t, sd, "s")
		writeLock(t, dir, deadPID(t), time.Now().Add(-time.Minute))
		if err := os.Symlink(outside, ops); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(ops)
		_, err := newEngine(t, sd, settle).Force(context.Background(), "s", ForceOptions{})
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Fatalf("Force = %v, want a FileError", err)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("created %s outside the state dir", ents[0].Name())
		}
	})
	t.Run("swapped for a symlink after it was found", func(t *testing.T) {
		dir := newSession(t, sd, "r")
		writeLock(t, dir, deadPID(t), time.Now().Add(-time.Minute))
		testHookOpLockDir = func(path string) {
			os.RemoveAll(path)
			os.Symlink(outside, path)
		}
		t.Cleanup(func() { testHookOpLockDir = nil; os.Remove(ops) })
		_, err := newEngine(t, sd, settle).Force(context.Background(), "r", ForceOptions{})
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Fatalf("Force = %v, want a FileError", err)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 0 {
			t.Fatalf("created %s outside the state dir", ents[0].Name())
		}
	})
}

// A survivor's exit is awaited on its pidfd: SIGTERM handled a moment later
// still counts as exited within the grace.
func TestForceWaitsForTheExitItCaused(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "s")
	a := startHolder(t, sd, "s", "--ignore-term")
	time.AfterFunc(200*time.Millisecond, func() { syscall.Kill(a.pid, syscall.SIGINT) })
	res, err := newEngine(t, sd, settle).Force(context.Background(), "s", ForceOptions{Terminate: true, Grace: 5 * time.Second})
	if err != nil || !slices.Equal(res.Exited, []int{a.pid}) || res.Session.State != StateFree {
		t.Fatalf("exited %v, session %s (%v): want the CLI's exit seen within the grace and the session free", res.Exited, res.Session.State, err)
	}
}

// Cancelled while it waits for the last session's operation lock, after it
// reclaimed in an earlier one: it says so.
func TestReclaimCancelledDuringTheLastSession(t *testing.T) {
	sd := t.TempDir()
	for _, id := range []string{"a", "b"} {
		writeLock(t, newSession(t, sd, id), deadPID(t), time.Now().Add(-time.Minute))
	}
	holdOpLock(t, sd, "b")
	ctx, cancel := context.WithCancel(context.Background())
	e := newEngine(t, sd, settle)
	time.AfterFunc(200*time.Millisecond, cancel) // a is done by then; b waits up to 500 ms
	res, err := e.Reclaim(ctx, ReclaimOptions{IDs: []string{"a", "b"}})
	if err != nil || !res.Cancelled || res.Totals.Reclaimed != 1 {
		t.Fatalf("Reclaim = %+v, %v; want a's lock reclaimed and the answer marked cancelled", res, err)
	}
}
