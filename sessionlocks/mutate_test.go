package sessionlocks

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/wine"
)

func TestReclaim(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()

	// Four sessions: a live CLI, a SIGKILLed one, a dead old-format lock
	// and an unknown holder (an unrelated process older than its lock).
	newSession(t, sd, "live")
	live := startHolder(t, sd, "live")

	newSession(t, sd, "killed")
	killed := startHolder(t, sd, "killed")
	killed.killAndReap()

	oldDir := newSession(t, sd, "old")
	deadLock := writeLock(t, oldDir, deadPID(t), time.Now().Add(-time.Minute))

	unkDir := newSession(t, sd, "unknown")
	sl := startSleeper(t)
	unkLock := writeLock(t, unkDir, sl.Process.Pid, time.Time{})
	pastSettle(t)

	e := newEngine(t, sd, settle)

	t.Run("dry run removes nothing", func(t *testing.T) {
		res, err := e.Reclaim(ctx, ReclaimOptions{All: true, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Reclaimed) != 2 || len(res.Kept) != 2 || len(res.Failed) != 0 {
			t.Fatalf("reclaimed %d kept %d failed %d; want 2, 2, 0", len(res.Reclaimed), len(res.Kept), len(res.Failed))
		}
		for _, h := range res.Reclaimed {
			if !exists(h.LockFile) {
				t.Errorf("dry run removed %s", h.LockFile)
			}
		}
	})

	t.Run("named session", func(t *testing.T) {
		res, err := e.Reclaim(ctx, ReclaimOptions{IDs: []string{"old"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Reclaimed) != 1 || exists(deadLock) {
			t.Fatalf("reclaimed %+v; %s still there: %v", res.Reclaimed, deadLock, exists(deadLock))
		}
	})

	t.Run("all sessions", func(t *testing.T) {
		res, err := e.Reclaim(ctx, ReclaimOptions{All: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Reclaimed) != 1 || res.Reclaimed[0].SessionID != "killed" {
			t.Fatalf("reclaimed %+v, want the killed session's holder", res.Reclaimed)
		}
		h := res.Reclaimed[0]
		if exists(h.LockFile) || exists(h.HoldFile) {
			t.Errorf("the killed CLI's files are still there")
		}
		if !exists(filepath.Join(sd, "live", lockFileName(live.pid))) || !exists(filepath.Join(sd, "live", holdFileName(live.pid))) {
			t.Errorf("a live lock was deleted")
		}
		if !exists(unkLock) {
			t.Errorf("an unknown holder's lock was deleted")
		}
		s := mustSession(t, e, "killed")
		if s.State != StateFree {
			t.Errorf("after reclaim the session is %s, want free", s.State)
		}
	})

	t.Run("errors", func(t *testing.T) {
		_, err := e.Reclaim(ctx, ReclaimOptions{IDs: []string{"../live"}})
		if !errors.Is(err, ErrInvalidID) {
			t.Errorf("traversal id: %v, want ErrInvalidID", err)
		}
		_, err = e.Reclaim(ctx, ReclaimOptions{IDs: []string{"nope"}})
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("missing session: %v, want ErrNotFound", err)
		}
	})
}

// TestConcurrentReclaimNeverDeletesALiveLock is the rule that outranks
// everything: two engines (as two sidecars would) reclaim in a loop while a
// CLI opens and closes the same session over and over; the CLI checks, each
// time before it closes, that its own files were still there.
func TestConcurrentReclaimNeverDeletesALiveLock(t *testing.T) {
	// Under Wine the fake CLI loses its own lock: it deletes it while the
	// engine has it open for its identity, writes it again, and Wine hands
	// it the doomed file (Windows refuses that write, or unlinks at once).
	wine.Skip(t, wine.PendingDelete)
	sd := t.TempDir()
	newSession(t, sd, "race")
	// A stale neighbour in the same session, so every reclaim has work to do.
	// Each opening lasts past the engines' settle window, so that the
	// .hold probe and the "hold-locked" rule are in play, not only "starting".
	iterations := 40
	if testing.Short() {
		iterations = 10
	}
	cli := exec.Command(fakeCLI, "--state-dir", sd, "--session", "race", "--loop", itoa(iterations), "--loop-hold", "70ms")
	var out strings.Builder
	cli.Stdout, cli.Stderr = &out, &out
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reclaimed [2]int
	for i := range 2 {
		// A settle window a hundredth of the default: a harsh judge, but
		// still longer than the CLI's pause between its .lock and its
		// flocked .hold, which is what the window is for.
		e := New(Options{StateDir: sd, Settle: 50 * time.Millisecond, Logger: quiet})
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := filepath.Join(sd, "race")
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Keep a stale lock around for the engines to find.
				if i == 0 {
					os.WriteFile(filepath.Join(dir, lockFileName(deadPID(t))), []byte("1\n"), 0o644)
				}
				res, err := e.Reclaim(context.Background(), ReclaimOptions{IDs: []string{"race"}})
				if err != nil {
					t.Error(err)
					return
				}
				reclaimed[i] += len(res.Reclaimed)
			}
		}()
	}
	err := cli.Wait()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("fake CLI: %v\n%s", err, out.String())
	}
	want := "done " + itoa(iterations) + " lost 0"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("a live lock was deleted: %s", out.String())
	}
	if reclaimed[0]+reclaimed[1] == 0 {
		t.Fatal("the engines reclaimed nothing: the test did not exercise removal")
	}
	t.Logf("%s; stale locks reclaimed meanwhile: %d", strings.TrimSpace(out.String()), reclaimed[0]+reclaimed[1])
}

func TestListOrderCacheAndMetadata(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	for i, ts := range []string{"2026-11-01T00:00:00Z", "2026-11-03T00:00:00.5Z", "2026-11-02T00:00:00Z"} {
		dir := filepath.Join(sd, "s"+itoa(i))
		os.MkdirAll(dir, 0o700)
		os.WriteFile(filepath.Join(dir, "workspace.yaml"), []byte("id: s"+itoa(i)+"\nsummary: Old style\ngit_root: /src/repo\nbranch: main\nupdated_at: "+ts+"\n"), 0o600)
	}
	// A session with a broken workspace.yaml is still listed.
	os.MkdirAll(filepath.Join(sd, "broken"), 0o700)
	os.WriteFile(filepath.Join(sd, "broken", "workspace.yaml"), []byte(":\n\t- [unclosed"), 0o600)
	writeLock(t, filepath.Join(sd, "s0"), deadPID(t), time.Now().Add(-time.Minute))

	e := newEngine(t, sd, settle)
	ss, err := e.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range ss {
		ids = append(ids, s.ID)
	}
	if got := strings.Join(ids, ","); got != "broken,s1,s2,s0" {
		t.Errorf("order %s, want broken (no updated_at: its mtime, now), s1, s2, s0", got)
	}
	s1 := ss[1]
	if s1.Name != "Old style" || s1.Repository != "/src/repo" || s1.Branch != "main" {
		t.Errorf("older keys not read: %+v", s1)
	}
	if ss[3].Holders[0].Cached {
		t.Error("first listing claims a cached verdict")
	}
	ss, _ = e.List(ctx, ListOptions{})
	if !ss[3].Holders[0].Cached {
		t.Error("second listing did not use the cache")
	}
	st := e.Status().Cache
	if st.Hits != 1 || st.Misses != 1 || st.Entries != 1 {
		t.Errorf("cache stats %+v, want 1 hit, 1 miss, 1 entry", st)
	}
	e.Invalidate("s0")
	ss, _ = e.List(ctx, ListOptions{})
	if ss[3].Holders[0].Cached {
		t.Error("Invalidate did not drop the verdict")
	}
	if s, _ := e.Judge(ctx, "s0"); s.Holders[0].Cached {
		t.Error("Session (a decision) used the cache")
	}
	got, err := e.List(ctx, ListOptions{IDs: []string{"s2", "s0"}})
	if err != nil || len(got) != 2 || got[0].ID != "s2" || got[1].ID != "s0" {
		t.Errorf("Sessions kept the order given? %v %v", got, err)
	}
	if _, err := e.List(ctx, ListOptions{IDs: []string{"s2", "nope"}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Sessions with a missing id: %v", err)
	}
}

func TestNewLockInCachedDirectoryIsSeen(t *testing.T) {
	// The directory cache trusts an unchanged directory mtime; a lock created
	// later changes it, and must be seen by the very next listing.
	ctx := context.Background()
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(dir, old, old)
	e := newEngine(t, sd, settle)
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].State != StateFree {
		t.Fatal("not free at first")
	}
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].State != StateFree {
		t.Fatal("not free at second")
	}
	startHolder(t, sd, "s")
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].State != StateInUse {
		t.Fatalf("a new lock in a cached directory was missed: %s", ss[0].State)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestInvalidate: a change to a session's files is seen after Invalidate,
// and a session created meanwhile, not announced, is listed too.
func TestInvalidate(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	newSession(t, sd, "a")
	dir := newSession(t, sd, "b")
	e := newEngine(t, sd, settle)
	e.List(ctx, ListOptions{})
	e.List(ctx, ListOptions{})
	os.WriteFile(filepath.Join(dir, "workspace.yaml"), []byte("name: Renamed\n"), 0o600)
	pid := deadPID(t)
	writeLock(t, dir, pid, time.Now().Add(-time.Minute))
	newSession(t, sd, "c") // not announced yet
	e.Invalidate("b")
	ss, err := e.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Session{}
	for _, s := range ss {
		byID[s.ID] = s
	}
	if b := byID["b"]; b.Name != "Renamed" || b.State != StateStale || len(b.Holders) != 1 || b.Holders[0].PID != pid {
		t.Errorf("b after its files changed: name %q, state %s, holders %+v", b.Name, b.State, b.Holders)
	}
	if _, ok := byID["c"]; !ok || len(ss) != 3 {
		t.Errorf("a session created meanwhile is missing: %d sessions", len(ss))
	}
}

// TestRenamedIntoPlaceMetadataIsRead: the CLI renames workspace.yaml into
// place, which changes its directory; the stat of the directory that
// validates a snapshot sees it, with no event and no invalidation.
func TestRenamedIntoPlaceMetadataIsRead(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	old := time.Now().Add(-time.Minute)
	touch(t, dir, old) // past the clock's granularity: the snapshot is trusted
	e := New(Options{StateDir: sd, Settle: settle, Logger: quiet, CacheTTL: time.Hour})
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].Name != "Session s" {
		t.Fatalf("name %q", ss[0].Name)
	}
	tmp := filepath.Join(dir, "workspace.yaml.tmp")
	if err := os.WriteFile(tmp, []byte("name: Renamed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "workspace.yaml")); err != nil {
		t.Fatal(err)
	}
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].Name != "Renamed" {
		t.Fatalf("a workspace.yaml renamed into place was not read: %q", ss[0].Name)
	}
}

func TestMetadataCaughtMidRewriteIsKept(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	e := newEngine(t, sd, settle)
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].Name != "Session s" {
		t.Fatalf("name %q", ss[0].Name)
	}
	yaml := filepath.Join(dir, "workspace.yaml")
	os.WriteFile(yaml, nil, 0o600) // truncated, not yet rewritten
	e.Invalidate("s")
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].Name != "Session s" {
		t.Fatalf("a half-written workspace.yaml blanked the name: %q", ss[0].Name)
	}
	os.WriteFile(yaml, []byte("name: Renamed\n"), 0o600)
	e.Invalidate("s")
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].Name != "Renamed" {
		t.Fatalf("the rewritten name was not read: %q", ss[0].Name)
	}
	os.Remove(yaml)
	e.Invalidate("s")
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].Name != "" {
		t.Fatalf("a deleted workspace.yaml still names the session: %q", ss[0].Name)
	}
}

func TestReclaimYoungStaleHolderWithHold(t *testing.T) {
	// A CLI that died within the settle window leaves a young lock and a
	// .hold that judging does not probe; reclaim, under the operation lock,
	// may and must.
	sd := t.TempDir()
	newSession(t, sd, "young")
	h := startHolder(t, sd, "young")
	h.killAndReap()
	e := newEngine(t, sd, time.Hour)
	dry, err := e.Reclaim(context.Background(), ReclaimOptions{IDs: []string{"young"}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.Reclaimed) != 1 || !exists(dry.Reclaimed[0].LockFile) || !exists(dry.Reclaimed[0].HoldFile) {
		t.Fatalf("a dry run must report what a reclaim would remove, and remove nothing: %+v", dry)
	}
	res, err := e.Reclaim(context.Background(), ReclaimOptions{IDs: []string{"young"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reclaimed) != 1 || len(res.Failed) != 0 {
		t.Fatalf("reclaimed %d, failed %+v", len(res.Reclaimed), res.Failed)
	}
	if r := res.Reclaimed[0]; r.Reason != ReasonHoldReleased || exists(r.LockFile) || exists(r.HoldFile) {
		t.Fatalf("%s: files left: %v %v", r.Reason, exists(r.LockFile), exists(r.HoldFile))
	}
}

func TestConcurrentListsAndInvalidation(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	for i := range 200 {
		newSession(t, sd, "s"+itoa(i))
	}
	e := newEngine(t, sd, settle)
	var wg sync.WaitGroup
	results := make([][]Session, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ss, err := e.List(ctx, ListOptions{})
			if err != nil {
				t.Error(err)
			}
			results[i] = ss
		}()
	}
	wg.Wait()
	for i, ss := range results {
		if len(ss) != 200 {
			t.Fatalf("caller %d got %d sessions", i, len(ss))
		}
	}
	// A lock planted and announced (InvalidateSession) while a listing is
	// in flight must be seen by a listing that starts after the announcement.
	dir := filepath.Join(sd, "s7")
	for range 20 {
		done := make(chan []Session)
		go func() { ss, _ := e.List(ctx, ListOptions{}); done <- ss }()
		writeLock(t, dir, deadPID(t), time.Now().Add(-time.Minute))
		e.Invalidate("s7")
		ss, _ := e.List(ctx, ListOptions{})
		<-done
		var s7 Session
		for _, s := range ss {
			if s.ID == "s7" {
				s7 = s
			}
		}
		if len(s7.Holders) == 0 {
			t.Fatal("a listing begun after the invalidation returned the older scan's view")
		}
		os.Remove(filepath.Join(dir, s7.Holders[0].LockFile[len(dir)+1:]))
		e.Invalidate("s7")
	}
}

// TestClockStepWidensTheTolerance: the wall clock stepped since the engine
// started makes start times and lock times incomparable by that much, so
// a pid that started seconds after its lock is no longer proof of reuse.
func TestClockStepWidensTheTolerance(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	sl := startSleeper(t)
	start := readProc(sl.Process.Pid).start
	writeLock(t, dir, sl.Process.Pid, start.Add(-3*time.Second))
	pastSettle(t)
	e := newEngine(t, sd, settle)
	if s := mustSession(t, e, "s"); s.Holders[0].Reason != ReasonPIDReused {
		t.Fatalf("without a clock step: %s, want pid-reused", s.Holders[0].Reason)
	}
	// As if the wall clock had been stepped an hour forward since the
	// engine started: start times now seem an hour later than the locks
	// written before the step, so three seconds prove nothing.
	e.boot0 = e.boot0.Add(-time.Hour)
	if s := mustSession(t, e, "s"); s.Holders[0].Verdict == Stale {
		t.Fatalf("after a clock step a 3 s margin still judged %s: %s", s.Holders[0].Reason, s.Holders[0].Detail)
	}
}

// TestSetAsideNeverReplaces: a file an earlier removal of this process set
// aside, and could not put back, is never replaced by the next removal of
// the same name (which would unlink it unrecovered).
func TestSetAsideNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	lock := writeLock(t, dir, 4242, time.Time{})
	earlier := filepath.Join(dir, asideName(lockFileName(4242)))
	if err := os.WriteFile(earlier, []byte("earlier\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id, err := lstatID(lock)
	if err != nil {
		t.Fatal(err)
	}
	st := openDirStat(dir)
	defer st.close()
	err = st.remove(lockFileName(4242), id)
	if b, _ := os.ReadFile(earlier); string(b) != "earlier\n" || err == nil || !strings.Contains(err.Error(), "still set aside") || !exists(lock) {
		t.Fatalf("remove: %v; the earlier set-aside file reads %q; the lock exists: %v", err, b, exists(lock))
	}
}
