package sessionlocks

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
	st := e.Caches().Stats()
	if st.Hits != 1 || st.Misses != 1 || st.Entries != 1 {
		t.Errorf("cache stats %+v, want 1 hit, 1 miss, 1 entry", st)
	}
	e.Caches().InvalidatePID(ss[3].Holders[0].PID)
	ss, _ = e.List(ctx, ListOptions{})
	if ss[3].Holders[0].Cached {
		t.Error("InvalidatePID did not drop the verdict")
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

// TestWatchedTrustsSnapshotsUntilInvalidated pins down SetWatched's contract:
// a watched engine does not look at a directory again until the watcher
// says it changed, and then it must.
func TestWatchedTrustsSnapshotsUntilInvalidated(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	e := newEngine(t, sd, settle)
	e.Caches().SetWatched(true)
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].State != StateFree {
		t.Fatal("not free at first")
	}
	writeLock(t, dir, deadPID(t), time.Now().Add(-time.Minute))
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].State != StateFree {
		t.Fatal("a watched engine re-read a directory nobody invalidated (the snapshot is not being used)")
	}
	if s := mustSession(t, e, "s"); s.State != StateStale {
		t.Fatalf("Session (a decision) must read afresh even when watched: %s", s.State)
	}
	e.Caches().InvalidateSession("s")
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].State != StateStale {
		t.Fatalf("after InvalidateSession the new lock was missed: %s", ss[0].State)
	}
	e.Caches().SetWatched(false)
	os.Remove(filepath.Join(dir, lockFileName(0)))
	newSession(t, sd, "t")
	if ss, _ := e.List(ctx, ListOptions{}); len(ss) != 2 {
		t.Fatalf("unwatched, a new session must be found by the state dir's mtime: %d sessions", len(ss))
	}
}

// TestTrustSinceKeepsOnlyWhatWasReadUnderWatch: a watcher that arms its
// watches, calls Mark and lists may have the engine trust that listing's
// snapshots (TrustSince), but never one read before the mark, when a change
// could have escaped the watches.
func TestTrustSinceKeepsOnlyWhatWasReadUnderWatch(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	before := newSession(t, sd, "before")
	e := newEngine(t, sd, settle)
	if _, err := e.List(ctx, ListOptions{IDs: []string{"before"}}); err != nil { // read before the mark
		t.Fatal(err)
	}
	writeLock(t, before, deadPID(t), time.Now().Add(-time.Minute)) // unseen by any watch
	mark := e.Caches().Mark()
	after := newSession(t, sd, "after")
	if _, err := e.List(ctx, ListOptions{IDs: []string{"after"}}); err != nil { // read after the mark
		t.Fatal(err)
	}
	e.Caches().TrustSince(mark)
	if !e.Caches().Watched() {
		t.Fatal("TrustSince did not turn trust on")
	}
	writeLock(t, after, deadPID(t), time.Now().Add(-time.Minute)) // a watcher would report this one
	ss, err := e.List(ctx, ListOptions{IDs: []string{"before", "after"}})
	if err != nil {
		t.Fatal(err)
	}
	if ss[0].State != StateStale {
		t.Errorf("a snapshot read before the mark was trusted: %s is %s, its lock missed", ss[0].ID, ss[0].State)
	}
	if ss[1].State != StateFree {
		t.Errorf("the snapshot read after the mark was not kept (%s): TrustSince dropped it like SetWatched", ss[1].State)
	}
}

// TestConfirmingRereadsARacyWorkspaceYAML: the watcher's confirmation of
// a snapshot read before its watches checks workspace.yaml by its
// identity, which a same-size rewrite within one timestamp tick of the read
// leaves as it was. A file that young when read is read again.
func TestConfirmingRereadsARacyWorkspaceYAML(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	ws := filepath.Join(dir, "workspace.yaml")
	tick := time.Now().Add(-100 * time.Millisecond) // the file's one timestamp tick, just before the read
	past := time.Now().Add(-time.Hour)
	os.Chtimes(ws, tick, tick)
	os.Chtimes(dir, past, past) // an old directory: its snapshot is confirmed by its stat
	e := newEngine(t, sd, settle)
	if ss, err := e.List(ctx, ListOptions{}); err != nil || len(ss) != 1 || ss[0].Name != "Session s" {
		t.Fatalf("first listing: %+v, %v", ss, err)
	}
	// Rewritten in place, the same size, within the same tick: nothing of
	// its identity (inode, size, mtime) or its directory's changes.
	b, _ := os.ReadFile(ws)
	if err := os.WriteFile(ws, bytes.Replace(b, []byte("Session s"), []byte("Renamed s"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(ws, tick, tick)
	os.Chtimes(dir, past, past)
	mark := e.Caches().Mark()
	if _, err := e.List(ctx, ListOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Caches().TrustSince(mark)
	ss, err := e.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ss[0].Name != "Renamed s" {
		t.Errorf("the trusted snapshot names the session %q: workspace.yaml, racy when read, was trusted by its identity", ss[0].Name)
	}
}

// TestWatchedListingEndsWithItsVerdicts: a watched engine answers a repeated
// listing from the last one, but only while every verdict in it would still
// come from the probe cache. A holder killed without any file event (the
// watcher's exit event is not delivered here) is seen once its verdict's
// TTL has passed, as it would be without the kept listing.
func TestWatchedListingEndsWithItsVerdicts(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	newSession(t, sd, "s")
	h := startHolder(t, sd, "s")
	var skew atomic.Int64
	e := New(Options{StateDir: sd, Settle: 50 * time.Millisecond, CacheTTL: 3 * time.Second, Logger: quiet,
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	e.Caches().SetWatched(true)
	skew.Store(int64(100 * time.Millisecond)) // past the settle window
	for i := range 3 {
		ss, err := e.List(ctx, ListOptions{})
		if err != nil || ss[0].State != StateInUse {
			t.Fatalf("listing %d: %v %+v", i, err, ss)
		}
		if i > 0 && !ss[0].Holders[0].Cached {
			t.Fatalf("listing %d re-probed a verdict that was cached", i)
		}
	}
	if e.lastList.Load() == nil {
		t.Fatal("a repeated watched listing was not kept: this test exercises nothing")
	}
	h.killAndReap()
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].State != StateInUse {
		t.Logf("the verdict was re-probed early (%s); fine, but the kept listing went unexercised", ss[0].State)
	}
	skew.Add(int64(4 * time.Second))
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].State != StateStale {
		t.Fatalf("past the verdict's TTL the kept listing still says %s for a dead holder", ss[0].State)
	}
}

// TestListingDuringAnInvalidationIsNotKept: a listing that begins after an
// invalidation moved the epoch on but before it dropped the caches reads
// the old snapshot; it may say what was true just before the event, but it
// must not be kept and served again once the event was handled.
func TestListingDuringAnInvalidationIsNotKept(t *testing.T) {
	for _, inv := range invalidations {
		t.Run(inv.name, func(t *testing.T) {
			ctx := context.Background()
			sd := t.TempDir()
			dir := newSession(t, sd, "s")
			e := newEngine(t, sd, settle)
			e.Caches().SetWatched(true)
			e.List(ctx, ListOptions{})
			e.List(ctx, ListOptions{}) // kept
			writeLock(t, dir, deadPID(t), time.Now().Add(-time.Minute))
			e.onInvalidating = func() {
				e.onInvalidating = nil
				e.List(ctx, ListOptions{}) // between the epoch's move and the drops: reads the old snapshot
			}
			inv.f(e, "s")
			for i := range 3 {
				if ss, _ := e.List(ctx, ListOptions{}); ss[0].State != StateStale {
					t.Fatalf("listing %d after the event was handled says %s: a listing made mid-invalidation was kept", i, ss[0].State)
				}
			}
		})
	}
}

// invalidations are the two ways a watcher announces a change to a
// session's files; both must drop what the engine knew of them.
var invalidations = []struct {
	name string
	f    func(e *Engine, id string)
}{
	{"InvalidateSession", func(e *Engine, id string) { e.Caches().InvalidateSession(id) }},
	{"InvalidateSessionFiles", func(e *Engine, id string) { e.Caches().InvalidateSessionFiles(id) }},
}

// TestInvalidateSessionFiles: a change to a session's files is seen after
// InvalidateSessionFiles, and the list of sessions it keeps is still checked
// against the state dir, so a session created meanwhile is listed too.
func TestInvalidateSessionFiles(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	newSession(t, sd, "a")
	dir := newSession(t, sd, "b")
	e := newEngine(t, sd, settle)
	e.Caches().SetWatched(true)
	e.List(ctx, ListOptions{})
	e.List(ctx, ListOptions{}) // kept
	os.WriteFile(filepath.Join(dir, "workspace.yaml"), []byte("name: Renamed\n"), 0o600)
	pid := deadPID(t)
	writeLock(t, dir, pid, time.Now().Add(-time.Minute))
	newSession(t, sd, "c") // not announced yet
	e.Caches().InvalidateSessionFiles("b")
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
	e.Caches().InvalidateSession("s")
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].Name != "Session s" {
		t.Fatalf("a half-written workspace.yaml blanked the name: %q", ss[0].Name)
	}
	os.WriteFile(yaml, []byte("name: Renamed\n"), 0o600)
	e.Caches().InvalidateSession("s")
	if ss, _ := e.List(ctx, ListOptions{}); ss[0].Name != "Renamed" {
		t.Fatalf("the rewritten name was not read: %q", ss[0].Name)
	}
	os.Remove(yaml)
	e.Caches().InvalidateSession("s")
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

func TestConcurrentListsShareAScanButNotAcrossInvalidation(t *testing.T) {
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
		e.Caches().InvalidateSession("s7")
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
		e.Caches().InvalidateSession("s7")
	}
}

// TestYoungLockOfAnInvisibleCLIIsNeverReclaimed: a CLI in another container
// or PID namespace sharing ~/.copilot has a pid this process cannot see. In
// its first seconds its lock looks like a dead pid's; only its held .hold
// says otherwise. (flock(1) holds the .hold here, as that CLI would.)
// TestWatchedTrustEndsWhenTheStateDirIsReplaced: a watcher's watches stay on
// the directory they were added to. If the state dir path comes to name
// another directory (moved aside and recreated, or a symlink retargeted),
// the engine must stop trusting its snapshots on its own.
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

// TestListSharedIsTheKeptListing: a watched engine hands ListShared callers
// its kept listing itself, the same slice each time, so that the server may
// reuse its encoding by identity. That is only sound if the slice never
// changes: List's callers get copies they may modify, and any invalidation
// ends the sharing.
func TestListSharedIsTheKeptListing(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	newSession(t, sd, "a")
	dir := newSession(t, sd, "b")
	e := newEngine(t, sd, settle)
	e.Caches().SetWatched(true)
	e.List(ctx, ListOptions{}) // read
	e.List(ctx, ListOptions{}) // kept
	first, err := e.listShared(ctx)
	if err != nil || len(first) != 2 {
		t.Fatalf("ListShared: %v %+v", err, first)
	}
	again, _ := e.listShared(ctx)
	if &again[0] != &first[0] {
		t.Fatal("a listing with nothing changed was not shared: the server could not reuse its encoding")
	}
	own, _ := e.List(ctx, ListOptions{})
	if &own[0] == &first[0] {
		t.Fatal("List gave out the kept listing, which its caller may modify")
	}
	own[0].State, own[0].Name = StateInUse, "modified"
	if after, _ := e.listShared(ctx); after[0].State != first[0].State || after[0].Name == "modified" {
		t.Fatal("modifying List's answer changed the kept listing")
	}
	writeLock(t, dir, deadPID(t), time.Now().Add(-time.Minute))
	e.Caches().InvalidateSession("b")
	changed, _ := e.listShared(ctx)
	if &changed[0] == &first[0] {
		t.Fatal("after an invalidation ListShared still handed out the old listing")
	}
	for _, s := range changed {
		if s.ID == "b" && s.State != StateStale {
			t.Fatalf("b is %s after its stale lock appeared", s.State)
		}
	}
	// The listing List itself makes (and the engine keeps) is copied too.
	e.Caches().InvalidateSessionFiles("a")
	made, _ := e.List(ctx, ListOptions{})
	kept, _ := e.listShared(ctx)
	if &made[0] == &kept[0] {
		t.Fatal("List gave out the listing it made and the engine kept")
	}
	made[0].Name = "modified"
	if again, _ := e.listShared(ctx); again[0].Name == "modified" || &again[0] != &kept[0] {
		t.Fatal("modifying List's own listing changed the kept one")
	}
}
