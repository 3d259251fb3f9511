package watch

// Options, modes, the comparison, and the fall back to poll mode.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

func TestNewRejectsBadOptions(t *testing.T) {
	e := newEngine(t.TempDir(), 0)
	tests := []struct {
		name string
		e    *sessionlocks.Engine
		opts Options
	}{
		{"nil engine", nil, Options{}},
		{"unknown mode", e, Options{Mode: "inotify"}},
		{"negative interval", e, Options{PollInterval: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if w, err := New(tt.e, tt.opts); err == nil {
				t.Fatalf("New = %v, nil; want an error", w)
			}
		})
	}
}

func TestAutoMode(t *testing.T) {
	for goos, want := range map[string]Mode{
		"linux": ModeNotify, "illumos": ModeNotify, "windows": ModePoll, "darwin": ModePoll, "freebsd": ModePoll, "openbsd": ModePoll,
	} {
		if got := autoMode(goos); got != want {
			t.Errorf("autoMode(%s) = %s, want %s", goos, got, want)
		}
	}
	w, err := New(newEngine(t.TempDir(), 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.Stats().Mode; got != autoMode(runtime.GOOS) {
		t.Errorf("Stats().Mode = %s before Run, want the resolved %s", got, autoMode(runtime.GOOS))
	}
}

func TestRunTwice(t *testing.T) {
	f := start(t, t.TempDir(), fixtureOpts{mode: ModeNotify})
	if err := f.w.Run(context.Background(), func(Change) {}); err == nil {
		t.Fatal("second Run succeeded")
	}
}

// A watch that cannot be added (inotify's ENOSPC at its limit, here
// injected) falls back to poll mode, says why, and keeps pushing.
func TestWatchLimitFallsBackToPoll(t *testing.T) {
	dir := t.TempDir()
	for i := range 10 {
		mkSession(t, dir, sessionID(200+i), "s")
	}
	var adds int
	f := start(t, dir, fixtureOpts{mode: ModeNotify, setup: func(w *Watcher) {
		w.testHookAdd = func(path string) error {
			// inotify_add_watch fails with ENOSPC at max_user_watches.
			if adds++; adds > 3 {
				return syscall.ENOSPC
			}
			return nil
		}
	}})
	st := f.waitStats(t, "poll mode", func(s Stats) bool { return s.Mode == ModePoll })
	if st.Note == "" {
		t.Errorf("Stats = %+v, want a note saying why the mode changed", st)
	}
	f.waitStats(t, "no directory watched", func(s Stats) bool { return s.Dirs == 0 })
	id := sessionID(205)
	pid := strconv.Itoa(os.Getpid())
	os.WriteFile(filepath.Join(dir, id, "inuse."+pid+".lock"), []byte(pid+"\n"), 0o644)
	f.rec.waitSession(t, id, "locked", func(s sessionlocks.Session) bool { return len(s.Holders) == 1 })
}

// same tells what the IDE is told of from what it is not; the engine lists
// holders in pid order, so order is not compared.
func TestSame(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	base := sessionlocks.Session{
		ID: "a", Dir: "/s/a", Name: "n", CWD: "/w", Repository: "o/r", Branch: "main", ClientName: "cli",
		CreatedAt: t0, UpdatedAt: t0, State: sessionlocks.StateInUse,
		Holders: []sessionlocks.Holder{
			{PID: 7, LockFile: "/s/a/inuse.7.lock", HoldFile: "/s/a/inuse.7.hold", Verdict: sessionlocks.Live, Reason: sessionlocks.ReasonHoldLocked,
				Detail: "x", ProbedAt: t0, LockWrittenAt: t0, Owner: &sessionlocks.Owner{PID: 7}},
			{PID: 9, LockFile: "/s/a/inuse.9.lock", Verdict: sessionlocks.Stale, Reason: sessionlocks.ReasonProcessExited, ProbedAt: t0, LockWrittenAt: t0},
		},
	}
	tests := []struct {
		name string
		mod  func(*sessionlocks.Session)
		same bool
	}{
		{"identical", func(*sessionlocks.Session) {}, true},
		{"probe time, cache flag and detail", func(s *sessionlocks.Session) {
			s.Holders[0].ProbedAt = t0.Add(time.Hour)
			s.Holders[0].Cached = true
			s.Holders[0].Detail = "pid 7 is copilot, started 3h ago"
		}, true},
		{"same instant, other zone", func(s *sessionlocks.Session) { s.UpdatedAt = t0.In(time.FixedZone("x", 3600)) }, true},
		{"state", func(s *sessionlocks.Session) { s.State = sessionlocks.StateStale }, false},
		{"conflict", func(s *sessionlocks.Session) { s.Conflict = true }, false},
		{"name", func(s *sessionlocks.Session) { s.Name = "m" }, false},
		{"cwd", func(s *sessionlocks.Session) { s.CWD = "/v" }, false},
		{"repository", func(s *sessionlocks.Session) { s.Repository = "o/q" }, false},
		{"branch", func(s *sessionlocks.Session) { s.Branch = "dev" }, false},
		{"client", func(s *sessionlocks.Session) { s.ClientName = "ide" }, false},
		{"created", func(s *sessionlocks.Session) { s.CreatedAt = t0.Add(time.Second) }, false},
		{"updated", func(s *sessionlocks.Session) { s.UpdatedAt = t0.Add(time.Second) }, false},
		{"holders omitted", func(s *sessionlocks.Session) { s.HoldersOmitted = 1 }, false},
		{"verdict", func(s *sessionlocks.Session) { s.Holders[0].Verdict = sessionlocks.Unknown }, false},
		{"reason", func(s *sessionlocks.Session) { s.Holders[0].Reason = sessionlocks.ReasonStarting }, false},
		{"pid", func(s *sessionlocks.Session) { s.Holders[1].PID = 10 }, false},
		{"hold file gone", func(s *sessionlocks.Session) { s.Holders[0].HoldFile = "" }, false},
		{"lock rewritten", func(s *sessionlocks.Session) { s.Holders[1].LockWrittenAt = t0.Add(time.Second) }, false},
		{"owner no longer proven", func(s *sessionlocks.Session) { s.Holders[0].Owner = nil }, false},
		{"holder added", func(s *sessionlocks.Session) { s.Holders = append(s.Holders, sessionlocks.Holder{PID: 11}) }, false},
		{"holder removed", func(s *sessionlocks.Session) { s.Holders = s.Holders[:1] }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			s.Holders = slices.Clone(base.Holders)
			tt.mod(&s)
			if got := same(base, s); got != tt.same {
				t.Errorf("same = %v, want %v", got, tt.same)
			}
		})
	}
}

// On a state dir other machines share (NFS, SMB, 9p, FUSE), file
// notifications never report another machine's changes: the watcher polls,
// whatever mode was asked for, and says why. Shown with the type injected (nfs) and with a real FUSE mount
// (bindfs), where "another machine" writes to the directory behind the
// mount, which the mount's inotify never hears of.
func TestSharedStateDirIsPolled(t *testing.T) {
	t.Run("nfs", func(t *testing.T) {
		dir := t.TempDir()
		testSharedStateDir(t, dir, dir, sessionlocks.Options{FSType: "nfs"}, "nfs")
	})
	t.Run("fuse", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root for a FUSE mount (CI runs as root)")
		}
		if _, err := exec.LookPath("bindfs"); err != nil {
			t.Skip("needs bindfs (apt install bindfs) for a real FUSE mount")
		}
		behind, mount := t.TempDir(), t.TempDir()
		if out, err := exec.Command("bindfs", behind, mount).CombinedOutput(); err != nil {
			t.Skipf("bindfs: %v %s", err, out)
		}
		t.Cleanup(func() {
			if exec.Command("fusermount", "-u", mount).Run() != nil {
				exec.Command("umount", "-l", mount).Run()
			}
		})
		testSharedStateDir(t, mount, behind, sessionlocks.Options{}, "fuse")
	})
}

// testSharedStateDir watches dir and makes a locked session in elsewhere,
// the same directory as another machine reaches it.
func testSharedStateDir(t *testing.T, dir, elsewhere string, opts sessionlocks.Options, fsName string) {
	opts.StateDir, opts.Settle = dir, 300*time.Millisecond
	e := sessionlocks.New(opts)
	w, err := New(e, Options{Mode: ModeNotify, PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Mode != ModePoll || !strings.Contains(st.Note, fsName) {
		t.Fatalf("mode %s, note %q: want poll, a note naming %s", st.Mode, st.Note, fsName)
	}
	rec := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, rec.notify) }()
	defer func() { cancel(); <-done }()
	<-w.Started()
	if st := w.Stats(); st.Dirs != 0 {
		t.Errorf("stats %+v: want no directory watched", st)
	}
	id := sessionID(0x51)
	mkSession(t, elsewhere, id, "from elsewhere")
	pid := strconv.Itoa(os.Getpid())
	os.WriteFile(filepath.Join(elsewhere, id, "inuse."+pid+".lock"), []byte(pid+"\n"), 0o644)
	rec.waitSession(t, id, "locked", func(s sessionlocks.Session) bool { return len(s.Holders) == 1 })
}

// TestPollListsAtMostAShareOfTheTime: where listing every session takes
// long (many thousands of them), poll mode spaces its listings out, up to
// maxPollGap.
func TestPollListsAtMostAShareOfTheTime(t *testing.T) {
	w, err := New(sessionlocks.New(sessionlocks.Options{StateDir: t.TempDir()}), Options{Mode: ModePoll})
	if err != nil {
		t.Fatal(err)
	}
	l := newLoop(w, func(Change) {})
	defer l.close()
	for _, c := range []struct {
		cost, since time.Duration
		want        bool
	}{
		{time.Millisecond, time.Second, true},
		{40 * time.Millisecond, time.Second, false},
		{40 * time.Millisecond, 8 * time.Second, true},
		{time.Second, maxPollGap, true}, // a slow disk still shows a change within seconds
	} {
		l.rescan, l.listCost, l.listedAt = false, c.cost, time.Now().Add(-c.since)
		if l.onTick(); l.rescan != c.want {
			t.Errorf("a listing of %v, %v ago: rescan %v, want %v", c.cost, c.since, l.rescan, c.want)
		}
	}
}
