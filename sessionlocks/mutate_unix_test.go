//go:build unix

package sessionlocks

// Mutations that need Unix: terminating a holder (SIGTERM; Windows offers
// no terminate), flock(1) holding a lock from outside, symbolic links made
// freely, and file owners.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReclaimWaitsForTheOperationLock(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "busy")
	lock := writeLock(t, dir, deadPID(t), time.Now().Add(-time.Minute))
	// Someone (a CLI opening the session) holds the operation lock throughout.
	opDir := filepath.Join(sd, ".session-operation-locks")
	os.MkdirAll(opDir, 0o700)
	flockHolder(t, filepath.Join(opDir, "busy.lock"), 30)
	waitFor(t, "flock(1) to take the lock", func() bool {
		f, err := os.Open(filepath.Join(opDir, "busy.lock"))
		if err != nil {
			return false
		}
		defer f.Close()
		return tryLock(f) == errLockBusy
	})
	res, err := newEngine(t, sd, settle).Reclaim(context.Background(), ReclaimOptions{IDs: []string{"busy"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failed) != 1 || !errors.Is(res.Failed[0].Err, ErrBusy) {
		t.Fatalf("want one failure with ErrBusy, got %+v", res)
	}
	if !exists(lock) {
		t.Fatal("the lock was removed without the operation lock")
	}
}

func TestForce(t *testing.T) {
	ctx := context.Background()
	t.Run("terminate the proven owner", func(t *testing.T) {
		sd := t.TempDir()
		newSession(t, sd, "s")
		h := startHolder(t, sd, "s")
		e := newEngine(t, sd, settle)
		if o := mustSession(t, e, "s").Holders[0].Owner; o == nil || o.PID != h.pid {
			t.Fatalf("owner %+v, want pid %d", o, h.pid)
		}
		res, err := e.Force(ctx, "s", ForceOptions{Terminate: true, Grace: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Signalled, []int{h.pid}) || !slices.Equal(res.Exited, []int{h.pid}) || len(res.StillRunning) != 0 {
			t.Errorf("signalled %v exited %v still running %v, want [%d] both", res.Signalled, res.Exited, res.StillRunning, h.pid)
		}
		if res.Session.State != StateFree {
			t.Errorf("session after force: %s, want free", res.Session.State)
		}
		if exists(filepath.Join(sd, "s", lockFileName(h.pid))) {
			t.Error("lock left behind")
		}
	})
	t.Run("an old-format CLI with nothing tying it to the session is not signalled", func(t *testing.T) {
		sd := t.TempDir()
		newSession(t, sd, "s")
		h := startHolder(t, sd, "s", "--old")
		pastSettle(t)
		res, err := newEngine(t, sd, settle).Force(ctx, "s", ForceOptions{Terminate: true, Grace: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Signalled) != 0 || readProc(h.pid).state != procAlive {
			t.Fatalf("signalled %v: nothing proves pid %d holds this session", res.Signalled, h.pid)
		}
		if len(res.NotSignalled) != 1 || !strings.Contains(res.NotSignalled[0].Why, "no .hold") {
			t.Errorf("not signalled %+v, want one saying the lock has no .hold", res.NotSignalled)
		}
		// A CLI that was not stopped keeps its lock: its session must not
		// read free while it runs.
		if len(res.Removed) != 0 || len(res.Kept) != 1 || res.Session.State != StateInUse {
			t.Errorf("removed %d, kept %d, session %s: want the live holder's lock kept and the session in use", len(res.Removed), len(res.Kept), res.Session.State)
		}
		// Without terminate, force keeps its meaning: the user takes the
		// session over while it runs.
		res, err = newEngine(t, sd, settle).Force(ctx, "s", ForceOptions{})
		if err != nil || len(res.Removed) != 1 || res.Session.State != StateFree {
			t.Errorf("force without terminate: removed %d, session %s, %v", len(res.Removed), res.Session.State, err)
		}
	})
	t.Run("never signal an unknown holder", func(t *testing.T) {
		sd := t.TempDir()
		dir := newSession(t, sd, "s")
		sl := startSleeper(t)
		lock := writeLock(t, dir, sl.Process.Pid, time.Time{})
		pastSettle(t)
		res, err := newEngine(t, sd, settle).Force(ctx, "s", ForceOptions{Terminate: true, Grace: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Signalled) != 0 || readProc(sl.Process.Pid).state != procAlive {
			t.Fatalf("an unverified process was signalled: %v", res.Signalled)
		}
		if len(res.NotSignalled) != 1 || !strings.Contains(res.NotSignalled[0].Why, "unknown") {
			t.Errorf("not signalled %+v, want one saying the verdict is unknown", res.NotSignalled)
		}
		// Not stopped, and whether it is a CLI cannot be told: its lock stays.
		if !exists(lock) || len(res.Removed) != 0 || len(res.Kept) != 1 || res.Session.State != StateUnknown {
			t.Errorf("removed %d, kept %d, session %s: terminate keeps what it did not stop", len(res.Removed), len(res.Kept), res.Session.State)
		}
	})
	t.Run("without terminate removes a live lock but signals nothing", func(t *testing.T) {
		sd := t.TempDir()
		newSession(t, sd, "s")
		h := startHolder(t, sd, "s")
		res, err := newEngine(t, sd, settle).Force(ctx, "s", ForceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Removed) != 1 || len(res.Signalled) != 0 || readProc(h.pid).state != procAlive {
			t.Fatalf("removed %d signalled %v", len(res.Removed), res.Signalled)
		}
	})
	t.Run("a lock that is a directory stays where it was", func(t *testing.T) {
		sd := t.TempDir()
		dir := newSession(t, sd, "s")
		lock := filepath.Join(dir, lockFileName(2147483003))
		if err := os.MkdirAll(filepath.Join(lock, "inside"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := newEngine(t, sd, settle).Force(ctx, "s", ForceOptions{})
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("got %v, want the removal refused: not a regular file", err)
		}
		if !exists(filepath.Join(lock, "inside")) {
			t.Error("the directory is no longer at its name")
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 2 {
			t.Errorf("the session dir holds %d entries, want workspace.yaml and the lock: %v", len(ents), ents)
		}
	})
	t.Run("not found", func(t *testing.T) {
		_, err := newEngine(t, t.TempDir(), settle).Force(ctx, "nope", ForceOptions{})
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("got %v, want ErrNotFound", err)
		}
	})
}

func TestSymlinksAndStateDir(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	elsewhere := t.TempDir()
	newSession(t, elsewhere, "target")
	writeLock(t, filepath.Join(elsewhere, "target"), deadPID(t), time.Now().Add(-time.Minute))
	if err := os.Symlink(filepath.Join(elsewhere, "target"), filepath.Join(sd, "linked")); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, sd, settle)
	ss, err := e.List(ctx, ListOptions{})
	if err != nil || len(ss) != 0 {
		t.Fatalf("a symlinked session dir was listed: %v %+v", err, ss)
	}
	if _, err := e.Judge(ctx, "linked"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Session(linked) = %v, want ErrNotFound", err)
	}
	if _, err := e.Reclaim(ctx, ReclaimOptions{IDs: []string{"linked"}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Reclaim(linked) = %v, want ErrNotFound", err)
	}
	ents, _ := os.ReadDir(filepath.Join(elsewhere, "target"))
	if len(ents) != 2 {
		t.Errorf("files behind the link were touched: %d entries", len(ents))
	}

	t.Run("missing state dir is empty", func(t *testing.T) {
		ss, err := New(Options{StateDir: filepath.Join(sd, "does", "not", "exist")}).List(ctx, ListOptions{})
		if err != nil || len(ss) != 0 {
			t.Fatalf("List = %v, %v", ss, err)
		}
	})
	t.Run("unreadable state dir", func(t *testing.T) {
		file := filepath.Join(sd, "a-file")
		os.WriteFile(file, nil, 0o644)
		e := New(Options{StateDir: file})
		if _, err := e.List(ctx, ListOptions{}); !errors.Is(err, ErrStateDir) {
			t.Fatalf("List on a file = %v, want ErrStateDir", err)
		}
		if _, err := e.Judge(ctx, "x"); !errors.Is(err, ErrStateDir) {
			t.Fatalf("Session on a file = %v, want ErrStateDir", err)
		}
	})
}

// TestYoungLockOfAnInvisibleCLIIsNeverReclaimed: a CLI in another container
// or PID namespace sharing ~/.copilot has a pid this process cannot see. In
// its first seconds its lock looks like a dead pid's; only its held .hold
// says otherwise. (flock(1) holds the .hold here, as that CLI would.)
func TestYoungLockOfAnInvisibleCLIIsNeverReclaimed(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	dir := newSession(t, sd, "elsewhere")
	pid := deadPID(t)
	lock := writeLock(t, dir, pid, time.Time{})
	hold := writeHold(t, dir, pid, time.Time{})
	flockHolder(t, hold, 30)
	waitFor(t, "flock(1) to take the .hold", func() bool { return probeHold(hold, fileID{}).held })

	e := newEngine(t, sd, time.Hour) // the lock stays young throughout
	if s := mustSession(t, e, "elsewhere"); s.State != StateInUse || s.State.CanResume() {
		t.Fatalf("young lock of an invisible pid with a held .hold: %s (%s)", s.State, s.Holders[0].Detail)
	}
	res, err := e.Reclaim(ctx, ReclaimOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reclaimed) != 0 || !exists(lock) || !exists(hold) {
		t.Fatalf("reclaimed %d; lock there: %v, hold there: %v", len(res.Reclaimed), exists(lock), exists(hold))
	}
	if len(res.Kept) != 1 || res.Kept[0].Reason != ReasonHoldLocked {
		t.Fatalf("kept %+v, want the holder judged hold-locked under the operation lock", res.Kept)
	}
}

// TestWatchedTrustEndsWhenTheStateDirIsReplaced: a watcher's watches stay on
// the directory they were added to. If the state dir path comes to name
// another directory (moved aside and recreated, or a symlink retargeted),
// the engine must stop trusting its snapshots on its own.
func TestWatchedTrustEndsWhenTheStateDirIsReplaced(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"moved and recreated", "symlink retargeted"} {
		t.Run(how, func(t *testing.T) {
			root := t.TempDir()
			real1, real2 := filepath.Join(root, "one"), filepath.Join(root, "two")
			sd := filepath.Join(root, "session-state")
			os.MkdirAll(real1, 0o700)
			if how == "symlink retargeted" {
				os.Symlink(real1, sd)
			} else {
				sd = real1
			}
			newSession(t, sd, "s")
			e := newEngine(t, sd, settle)
			if ss, _ := e.List(ctx, ListOptions{}); len(ss) != 1 || ss[0].State != StateFree {
				t.Fatalf("first listing: %+v", ss)
			}
			// The same session id, now locked, in another directory.
			os.MkdirAll(real2, 0o700)
			dir2 := newSession(t, real2, "s")
			writeLock(t, dir2, deadPID(t), time.Now().Add(-time.Minute))
			if how == "symlink retargeted" {
				tmp := filepath.Join(root, "link.tmp")
				os.Symlink(real2, tmp)
				os.Rename(tmp, sd)
			} else {
				os.Rename(real1, filepath.Join(root, "one.bak"))
				os.Rename(real2, real1)
			}
			ss, err := e.List(ctx, ListOptions{})
			if err != nil || len(ss) != 1 || ss[0].State != StateStale {
				t.Fatalf("after the state dir was replaced the listing still served the old snapshot: %+v %v", ss, err)
			}
		})
	}
}

func TestOperationLockOwnedByTheStateDirOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root creates files for another user")
	}
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	writeLock(t, dir, deadPID(t), time.Now().Add(-time.Minute))
	os.Chown(sd, 4242, 4242)
	if _, err := newEngine(t, sd, settle).Reclaim(context.Background(), ReclaimOptions{IDs: []string{"s"}}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(sd, ".session-operation-locks"), filepath.Join(sd, ".session-operation-locks", "s.lock")} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != 4242 {
			t.Errorf("%s is owned by uid %d, want the state dir's owner 4242", p, st.Uid)
		}
	}
}
