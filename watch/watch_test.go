package watch

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/wine"
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
		"linux": ModeNotify, "windows": ModeNotify, "darwin": ModePoll, "freebsd": ModePoll, "openbsd": ModePoll,
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

// A CLI opens a session (lock created), its lock comes of age with no file
// event (starting -> hold-locked, from the settle timer), and it closes the
// session cleanly (lock removed).
func TestLockCreatedAndRemoved(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		dir := t.TempDir()
		id, idle := sessionID(1), sessionID(2)
		mkSession(t, dir, id, "busy")
		mkSession(t, dir, idle, "idle")
		f := start(t, dir, fixtureOpts{mode: m, settle: time.Second})
		if m == ModePoll {
			f.waitStats(t, "only the state dir watched", func(s Stats) bool { return s.Dirs == f.stateWatches && s.Polled == 2 })
		}

		c := startCLI(t, dir, id, "--exit-on-eof")
		s := f.rec.waitState(t, id, sessionlocks.StateInUse)
		first, _ := holder(s, c.pid)
		s = f.rec.waitSession(t, id, "holder hold-locked", hasReason(c.pid, sessionlocks.ReasonHoldLocked))
		if h, _ := holder(s, c.pid); h.HoldFile == "" || h.Verdict != sessionlocks.Live {
			t.Errorf("holder = %+v, want a live holder with its .hold", h)
		}
		if first.Reason != sessionlocks.ReasonStarting {
			t.Logf("first notification already said %s (machine slow?); the settle re-probe went unexercised", first.Reason)
		}
		st := f.waitStats(t, "the holder's process watched", func(s Stats) bool { return s.Processes+s.PolledProcesses == 1 })
		if runtime.GOOS == "linux" && st.Processes != 1 {
			t.Errorf("Stats = %+v: want the holder awaited with a pidfd, not polled", st)
		}
		if m == ModePoll {
			f.waitStats(t, "the locked session watched", func(s Stats) bool { return s.Dirs == f.stateWatches+1 && s.Polled == 1 })
		}

		c.stdin.Close() // the fake CLI removes its files and exits
		f.rec.waitSession(t, id, "free again", func(s sessionlocks.Session) bool {
			return s.State == sessionlocks.StateFree && len(s.Holders) == 0
		})
		c.cmd.Wait()
		if f.rec.has(idle) {
			t.Errorf("the idle session was reported though nothing about it changed")
		}
		f.waitStats(t, "no process watched", func(s Stats) bool { return s.Processes+s.PolledProcesses == 0 })
		if m == ModePoll {
			f.waitStats(t, "the session unwatched again", func(s Stats) bool { return s.Dirs == f.stateWatches })
		}
	})
}

// A SIGKILLed CLI changes no file: only the exit event (pidfd) reveals it,
// or, where the platform has none, the one-second re-probe of live holders.
func TestHolderKilled(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		for _, tc := range []struct{ format, exits string }{{"new", "event"}, {"old", "event"}, {"new", "polled"}} {
			format := tc.format
			t.Run(tc.format+"-"+tc.exits, func(t *testing.T) {
				dir := t.TempDir()
				id := sessionID(3)
				mkSession(t, dir, id, "victim")
				f := start(t, dir, fixtureOpts{mode: m, setup: func(w *Watcher) {
					if tc.exits == "polled" {
						w.newExitWatcher = func(chan<- int) exitWatcher { return unsupportedWatcher{} }
					}
				}})
				var args []string
				want := []sessionlocks.Reason{sessionlocks.ReasonHoldLocked}
				if format == "old" {
					// Starting for the settle window, verified after it: a
					// first verdict made late on a busy machine skips starting.
					args, want = []string{"--old"}, []sessionlocks.Reason{sessionlocks.ReasonStarting, sessionlocks.ReasonVerified}
				}
				c := startCLI(t, dir, id, args...)
				f.rec.waitSession(t, id, "live holder", hasReason(c.pid, want...))
				st := f.waitStats(t, "the holder's process watched", func(s Stats) bool { return s.Processes+s.PolledProcesses == 1 })
				if polled := tc.exits == "polled"; polled != (st.PolledProcesses == 1) && (polled || runtime.GOOS == "linux") {
					t.Errorf("Stats = %+v with exits %s", st, tc.exits)
				}

				if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				// Not reaped yet: the process is a zombie, as it stays while a
				// slow parent has not waited for it.
				s := f.rec.waitState(t, id, sessionlocks.StateStale)
				h, _ := holder(s, c.pid)
				if h.Verdict != sessionlocks.Stale {
					t.Errorf("holder %+v, want stale", h)
				}
				c.cmd.Wait()
				for _, name := range []string{"inuse." + strconv.Itoa(c.pid) + ".lock"} {
					if _, err := os.Stat(filepath.Join(dir, id, name)); err != nil {
						t.Errorf("%s: %v; SIGKILL leaves the lock behind and the watcher must not touch it", name, err)
					}
				}
				f.waitStats(t, "no process watched", func(s Stats) bool { return s.Processes+s.PolledProcesses == 0 })
			})
		}
	})
}

func TestSessionDirCreatedAndRemoved(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		if m == ModeNotify {
			wine.Skip(t, wine.DeleteWhileOpen) // the watched session dir, removed, stays while watched
		}
		dir := t.TempDir()
		mkSession(t, dir, sessionID(1), "old")
		f := start(t, dir, fixtureOpts{mode: m})

		id := sessionID(4)
		mkSession(t, dir, id, "brand new")
		s := f.rec.waitSession(t, id, "named", func(s sessionlocks.Session) bool { return s.Name == "brand new" })
		if s.State != sessionlocks.StateFree {
			t.Errorf("new session state %s, want free", s.State)
		}
		// Not a session: the CLI's operation-lock dir and a stray file.
		os.MkdirAll(filepath.Join(dir, ".session-operation-locks"), 0o700)
		os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600)

		if err := os.RemoveAll(filepath.Join(dir, id)); err != nil {
			t.Fatal(err)
		}
		f.rec.waitRemoved(t, id)
		for _, c := range f.rec.snapshot() {
			for _, s := range c.Changed {
				if s.ID != id {
					t.Errorf("notified about %q, which did not change", s.ID)
				}
			}
		}
	})
}

func TestStateDirCreatedAfterStart(t *testing.T) {
	wine.Skip(t, wine.DeleteWhileOpen) // the removed session dir stays: the state dir cannot be removed
	modes(t, func(t *testing.T, m Mode) {
		home := t.TempDir()
		dir := filepath.Join(home, ".copilot", "session-state")
		f := start(t, dir, fixtureOpts{mode: m})
		if st := f.w.Stats(); st.StateDirPresent || st.Dirs != f.stateWatches {
			t.Errorf("Stats = %+v, want the ancestor watched and the state dir absent", st)
		}

		// The CLI creates the whole chain at once on first use.
		id := sessionID(5)
		c := startCLI(t, dir, id)
		f.rec.waitState(t, id, sessionlocks.StateInUse)
		f.waitStats(t, "state dir present", func(s Stats) bool { return s.StateDirPresent })
		c.cmd.Process.Kill()
		c.cmd.Wait()
		f.rec.waitState(t, id, sessionlocks.StateStale)

		// Removing the state dir removes its sessions; creating it again
		// is seen again.
		if err := os.RemoveAll(filepath.Join(home, ".copilot")); err != nil {
			t.Fatal(err)
		}
		f.rec.waitRemoved(t, id)
		f.waitStats(t, "state dir absent", func(s Stats) bool { return !s.StateDirPresent })
		id2 := sessionID(6)
		mkSession(t, dir, id2, "second life")
		f.rec.waitSession(t, id2, "named", func(s sessionlocks.Session) bool { return s.Name == "second life" })
	})
}

// Stall the event reader until the kernel's inotify queue overflows, then
// make a change whose event the kernel drops: only the rescan that
// fsnotify.ErrEventOverflow triggers can find it.
func TestOverflowRescan(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("provokes a real inotify queue overflow")
	}
	limit := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		if n, err := strconv.Atoi(string(b[:len(b)-1])); err == nil {
			limit = n
		}
	}
	if limit > 200000 {
		t.Skipf("max_queued_events is %d; too many files to create for an overflow", limit)
	}
	dir := t.TempDir()
	junkDir := mkSession(t, dir, sessionID(7), "junk")
	target := sessionID(8)
	mkSession(t, dir, target, "target")

	var gate sync.Mutex
	var stalled sync.WaitGroup
	stalled.Add(1)
	var once sync.Once
	f := start(t, dir, fixtureOpts{mode: ModeNotify, setup: func(w *Watcher) {
		w.testHookEvent = func() {
			once.Do(stalled.Done)
			gate.Lock()
			gate.Unlock()
		}
	}})
	gate.Lock()
	if err := os.WriteFile(filepath.Join(junkDir, "first"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stalled.Wait() // the loop is now stuck in the hook

	// fsnotify buffers up to 4096 events itself; the kernel queues limit more.
	for i := range limit + 4096 + 2048 {
		if err := os.WriteFile(filepath.Join(junkDir, "junk"+strconv.Itoa(i)), nil, 0o600); err != nil {
			gate.Unlock()
			t.Fatal(err)
		}
	}
	lock := filepath.Join(dir, target, "inuse."+strconv.Itoa(os.Getpid())+".lock")
	if err := os.WriteFile(lock, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		gate.Unlock()
		t.Fatal(err)
	}
	gate.Unlock()

	s := f.rec.waitSession(t, target, "holding the planted lock", func(s sessionlocks.Session) bool {
		_, ok := holder(s, os.Getpid())
		return ok
	})
	if s.State != sessionlocks.StateInUse && s.State != sessionlocks.StateUnknown {
		t.Errorf("state %s; the test process is alive, want inUse or unknown", s.State)
	}
	if st := f.w.Stats(); st.Rescans < 2 {
		t.Errorf("Stats = %+v: the change arrived without an overflow rescan, so the queue did not overflow", st)
	}
	for _, c := range f.rec.snapshot() {
		for _, s := range c.Changed {
			if s.ID == sessionID(7) {
				t.Errorf("the junk session was reported; its junk files cannot change it")
			}
		}
	}
}

// A thousand sessions locked at once arrive in a few notifications, all of
// them. Where the state dir is watched, the watcher's loop is held on the
// first event while the sessions are made, so that they reach it as one
// burst however slowly a busy machine makes them; then every pause of
// debounce within the burst is the watcher's own.
func TestBurstCoalesces(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		const n = 1000
		dir := t.TempDir()
		var gate sync.Mutex
		stalled := make(chan struct{})
		var once sync.Once
		// A settle window of 1 ms: each lock is judged once, not once more
		// when its window ends.
		f := start(t, dir, fixtureOpts{mode: m, settle: time.Millisecond, setup: func(w *Watcher) {
			w.testHookEvent = func() {
				once.Do(func() { close(stalled) })
				gate.Lock()
				gate.Unlock()
			}
		}})
		gate.Lock()
		held := true
		release := func() {
			if held {
				held = false
				gate.Unlock()
			}
		}
		defer release()
		if kqueueLike {
			release() // no events for the state dir: found by its mtime
		}
		pid := strconv.Itoa(os.Getpid())
		making := time.Now()
		for i := range n {
			sd := filepath.Join(dir, sessionID(100+i))
			if err := os.Mkdir(sd, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(sd, "inuse."+pid+".lock"), []byte(pid+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		made := time.Since(making)
		if held {
			select {
			case <-stalled:
			case <-time.After(10 * time.Second):
				t.Fatal("the watcher never saw the first session made")
			}
		}
		began := time.Now()
		release()
		f.rec.waitFor(t, "all sessions locked", func(v map[string]sessionlocks.Session) bool {
			if len(v) != n {
				return false
			}
			for _, s := range v {
				if len(s.Holders) != 1 {
					return false
				}
			}
			return true
		})
		took := time.Since(began)
		got := len(f.rec.snapshot())
		limit := n / 20
		if kqueueLike {
			// Found by polling while they are made: each poll may bring
			// some (twice as many allowed, for timing).
			limit += 2 * int(made/f.w.interval)
		}
		t.Logf("%d sessions in %d notifications, over %v (made in %v; limit %d)", n, got, took, made, limit)
		if got > limit {
			t.Errorf("%d sessions took %d notifications in %v; bursts should coalesce", n, got, took)
		}
	})
}

// Writes that cannot change what the engine says (events.jsonl appends, a
// workspace.yaml rewritten unchanged, the CLI's fork lock) notify nothing.
func TestNoChangeNoNotification(t *testing.T) {
	modes(t, func(t *testing.T, m Mode) {
		dir := t.TempDir()
		quiet, sentinel, sentinel2 := sessionID(9), sessionID(10), sessionID(11)
		qd := mkSession(t, dir, quiet, "quiet")
		mkSession(t, dir, sentinel, "sentinel")
		mkSession(t, dir, sentinel2, "second sentinel")
		f := start(t, dir, fixtureOpts{mode: m})
		c := startCLI(t, dir, quiet)
		f.rec.waitSession(t, quiet, "hold-locked", hasReason(c.pid, sessionlocks.ReasonHoldLocked))
		before := len(f.rec.snapshot())

		ws, _ := os.ReadFile(filepath.Join(qd, "workspace.yaml"))
		for i := range 20 {
			ev, _ := os.OpenFile(filepath.Join(qd, "events.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			ev.WriteString(`{"type":"assistant.message","n":` + strconv.Itoa(i) + "}\n")
			ev.Close()
			// Rewritten atomically: a reader can catch a file rewritten in
			// place half-written, and that would be a real (if brief) change.
			os.WriteFile(filepath.Join(qd, "workspace.yaml.tmp"), ws, 0o600)
			os.Rename(filepath.Join(qd, "workspace.yaml.tmp"), filepath.Join(qd, "workspace.yaml"))
			os.WriteFile(filepath.Join(qd, ".workspace-fork.lock"), nil, 0o600)
		}
		// Events are handled in order, so in notify mode once the first
		// sentinel's lock is in, the quiet session's writes have been handled
		// too. In poll mode the tick that found that lock may have stat-ed the
		// quiet dir before its last writes; the second sentinel, locked only
		// after the first was delivered and not watched (it never had a
		// holder), is found by a later tick, which stats the quiet dir after
		// all of them.
		pid := strconv.Itoa(os.Getpid())
		for _, id := range []string{sentinel, sentinel2} {
			os.WriteFile(filepath.Join(dir, id, "inuse."+pid+".lock"), []byte(pid+"\n"), 0o644)
			f.rec.waitSession(t, id, "locked", func(s sessionlocks.Session) bool { return len(s.Holders) == 1 })
		}
		for _, ch := range f.rec.snapshot()[before:] {
			for _, s := range ch.Changed {
				if s.ID == quiet {
					t.Errorf("quiet session reported after writes that change nothing: %+v", s)
				}
			}
		}
	})
}

// Running out of inotify watches falls back to poll mode and keeps working.
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
	f.waitStats(t, "idle sessions unwatched", func(s Stats) bool { return s.Dirs == 1 && s.Polled == 10 })
	id := sessionID(205)
	pid := strconv.Itoa(os.Getpid())
	os.WriteFile(filepath.Join(dir, id, "inuse."+pid+".lock"), []byte(pid+"\n"), 0o644)
	f.rec.waitSession(t, id, "locked", func(s sessionlocks.Session) bool { return len(s.Holders) == 1 })
}

// Poll mode stats sessions left alone for over an hour only every other
// tick, alternating halves; a lock written in either half is still found,
// and so is one in a session used a minute ago.
func TestPollFindsLocksInQuietSessions(t *testing.T) {
	dir := t.TempDir()
	ids := []string{sessionID(0x30), sessionID(0x31), sessionID(0x32)} // last digits even, odd: both halves
	old, recent := time.Now().Add(-48*time.Hour), time.Now().Add(-time.Minute)
	for i, id := range ids {
		sd := mkSession(t, dir, id, "s")
		at := old
		if i == 2 {
			at = recent
		}
		os.Chtimes(sd, at, at)
	}
	f := start(t, dir, fixtureOpts{mode: ModePoll})
	f.waitStats(t, "only the state dir watched", func(s Stats) bool { return s.Dirs == f.stateWatches && s.Polled == 3 })
	pid := strconv.Itoa(os.Getpid())
	for _, id := range ids {
		os.WriteFile(filepath.Join(dir, id, "inuse."+pid+".lock"), []byte(pid+"\n"), 0o644)
		f.rec.waitSession(t, id, "locked", func(s sessionlocks.Session) bool { return len(s.Holders) == 1 })
	}
}

func TestUnchanged(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	base := sessionlocks.Session{
		ID: "a", Dir: "/s/a", Name: "n", CWD: "/w", Repository: "o/r", Branch: "main", ClientName: "cli",
		CreatedAt: t0, UpdatedAt: t0, State: sessionlocks.StateInUse,
		Holders: []sessionlocks.Holder{
			{PID: 7, LockFile: "/s/a/inuse.7.lock", HoldFile: "/s/a/inuse.7.hold", Verdict: sessionlocks.Live, Reason: sessionlocks.ReasonHoldLocked, Detail: "x", ProbedAt: t0},
			{PID: 9, LockFile: "/s/a/inuse.9.lock", Verdict: sessionlocks.Stale, Reason: sessionlocks.ReasonProcessExited, ProbedAt: t0},
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
		{"holders reordered", func(s *sessionlocks.Session) { s.Holders[0], s.Holders[1] = s.Holders[1], s.Holders[0] }, true},
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
		{"verdict", func(s *sessionlocks.Session) { s.Holders[0].Verdict = sessionlocks.Unknown }, false},
		{"reason", func(s *sessionlocks.Session) { s.Holders[0].Reason = sessionlocks.ReasonStarting }, false},
		{"pid", func(s *sessionlocks.Session) { s.Holders[1].PID = 10 }, false},
		{"hold file gone", func(s *sessionlocks.Session) { s.Holders[0].HoldFile = "" }, false},
		{"holder added", func(s *sessionlocks.Session) { s.Holders = append(s.Holders, sessionlocks.Holder{PID: 11}) }, false},
		{"holder removed", func(s *sessionlocks.Session) { s.Holders = s.Holders[:1] }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			s.Holders = slices.Clone(base.Holders)
			tt.mod(&s)
			if got := unchanged(base, s); got != tt.same {
				t.Errorf("unchanged = %v, want %v", got, tt.same)
			}
		})
	}
}

// TestEngineTrustFollowsTheWatcher checks the contract with the engine's
// SetWatched: trusted only while notify mode covers everything, and a lock
// created in a watched session is visible to the very next listing once its
// event has been handled (the watcher invalidates on receipt, not after the
// debounce).
func TestEngineTrustFollowsTheWatcher(t *testing.T) {
	for _, mode := range []Mode{ModeNotify, ModePoll} {
		t.Run(string(mode), func(t *testing.T) {
			sd := t.TempDir()
			id := "0f8fad5b-d9cb-469f-a165-70867728950e"
			os.MkdirAll(filepath.Join(sd, id), 0o700)
			discard := slog.New(slog.NewTextHandler(io.Discard, nil))
			e := sessionlocks.New(sessionlocks.Options{StateDir: sd, Logger: discard})
			w, err := New(e, Options{Mode: mode, Logger: discard})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			changes := make(chan Change, 16)
			go func() { done <- w.Run(ctx, func(c Change) { changes <- c }) }()
			for deadline := time.Now().Add(10 * time.Second); !w.Stats().Watching; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("watcher did not start")
				}
			}
			if got, want := e.Caches().Watched(), mode == ModeNotify; got != want {
				t.Fatalf("engine watched = %v in %s mode, want %v", got, mode, want)
			}
			e.List(ctx, sessionlocks.ListOptions{})
			os.WriteFile(filepath.Join(sd, id, "inuse.4000001.lock"), []byte("4000001\n"), 0o644)
			select {
			case <-changes:
			case <-time.After(10 * time.Second):
				t.Fatal("no change notified")
			}
			ss, err := e.List(ctx, sessionlocks.ListOptions{})
			if err != nil || len(ss) != 1 || len(ss[0].Holders) != 1 {
				t.Fatalf("listing after the notification missed the lock: %+v %v", ss, err)
			}
			cancel()
			<-done
			if e.Caches().Watched() {
				t.Fatal("engine still trusts its snapshots after the watcher stopped")
			}
		})
	}
}

// TestStateDirReplacedByACopy: a restore or sync tool moves the state dir
// aside and renames a copy in. Watches on the old directories must not count
// for the new ones: a lock then written in a session of the copy is seen
// and pushed (in notify mode, where the engine otherwise trusts snapshots).
func TestStateDirReplacedByACopy(t *testing.T) {
	root := t.TempDir()
	sd := filepath.Join(root, "session-state")
	id := "0f8fad5b-d9cb-469f-a165-70867728950e"
	os.MkdirAll(filepath.Join(sd, id), 0o700)
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := sessionlocks.New(sessionlocks.Options{StateDir: sd, Logger: discard})
	w, err := New(e, Options{Mode: ModeNotify, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := make(chan Change, 64)
	go w.Run(ctx, func(c Change) { changes <- c })
	for deadline := time.Now().Add(10 * time.Second); !w.Stats().Watching; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("watcher did not start")
		}
	}
	e.List(ctx, sessionlocks.ListOptions{})

	copyDir := filepath.Join(root, "copy")
	os.MkdirAll(filepath.Join(copyDir, id), 0o700)
	if err := os.Rename(sd, filepath.Join(root, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copyDir, sd); err != nil {
		t.Fatal(err)
	}
	// The lock must come after the watcher's rescan of the new directory,
	// or that rescan reads it whatever the watches. A session created in
	// the copy reaches no watch of the old directories: once it is
	// delivered, that rescan is done.
	fence := "1b4e28ba-2fa1-41d2-883f-0016d3cca427"
	os.Mkdir(filepath.Join(sd, fence), 0o700)
	deadline := time.After(10 * time.Second)
	for fenced := false; !fenced; {
		select {
		case c := <-changes:
			fenced = slices.ContainsFunc(c.Changed, func(s sessionlocks.Session) bool { return s.ID == fence })
		case <-deadline:
			t.Fatal("the session created in the replaced state dir was never delivered")
		}
	}
	os.WriteFile(filepath.Join(sd, id, "inuse.4000001.lock"), []byte("4000001\n"), 0o644)
	for {
		select {
		case c := <-changes:
			for _, s := range c.Changed {
				if s.ID == id && len(s.Holders) == 1 {
					ss, err := e.List(ctx, sessionlocks.ListOptions{})
					if err != nil || len(ss) != 2 || !slices.ContainsFunc(ss, func(s sessionlocks.Session) bool { return s.ID == id && len(s.Holders) == 1 }) {
						t.Fatalf("notified, but a listing still misses the lock: %+v %v", ss, err)
					}
					return
				}
			}
		case <-deadline:
			ss, _ := e.List(ctx, sessionlocks.ListOptions{})
			t.Fatalf("no notification for the lock in the replaced state dir; listing says %+v", ss)
		}
	}
}

// TestChangesBeforeTheWatchesAreDelivered: in notify mode the watcher lists
// every session before it adds the session watches (the IDE's first
// listing shares that scan). A lock written, a session removed and one
// created in between reach no watch; the rescan that follows must find
// them (it stats every directory read before), deliver them, and leave the
// engine trusting only what it confirmed.
func TestChangesBeforeTheWatchesAreDelivered(t *testing.T) {
	dir := t.TempDir()
	locked, gone, kept, added, renamed := sessionID(0x40), sessionID(0x41), sessionID(0x42), sessionID(0x43), sessionID(0x44)
	past := time.Now().Add(-time.Hour)
	for _, id := range []string{locked, gone, kept, renamed} {
		os.Chtimes(mkSession(t, dir, id, "s"), past, past) // old enough to be trusted
	}
	var early int
	f := start(t, dir, fixtureOpts{mode: ModeNotify, setup: func(w *Watcher) {
		w.testHookEarly = func() {
			early++
			lock := filepath.Join(dir, locked, "inuse.4194000.lock")
			os.WriteFile(lock, []byte("4194000\n"), 0o644)
			os.Chtimes(lock, past, past)
			os.RemoveAll(filepath.Join(dir, gone))
			mkSession(t, dir, added, "s")
			// Rewritten in place, which leaves the directory's mtime alone.
			mkSession(t, dir, renamed, "renamed before its watch")
		}
	}})
	if early != 1 {
		t.Fatalf("the early listing ran %d times, want 1: this test exercises nothing", early)
	}
	f.rec.waitSession(t, locked, "the lock written before its watch", func(s sessionlocks.Session) bool { return len(s.Holders) == 1 })
	f.rec.waitRemoved(t, gone)
	f.rec.waitSession(t, added, "the session created before the watches", func(sessionlocks.Session) bool { return true })
	f.rec.waitSession(t, renamed, "the workspace.yaml rewritten before the watches", func(s sessionlocks.Session) bool { return s.Name == "renamed before its watch" })
	if !f.e.Caches().Watched() {
		t.Fatal("the engine does not trust the watcher after start")
	}
	ss, err := f.e.List(context.Background(), sessionlocks.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, s := range ss {
		got[s.ID] = len(s.Holders)
		if s.ID == renamed && s.Name != "renamed before its watch" {
			t.Errorf("the trusted engine names %s %q, the name workspace.yaml had before its watch", s.ID, s.Name)
		}
	}
	if want := map[string]int{locked: 1, kept: 0, added: 0, renamed: 0}; !maps.Equal(got, want) {
		t.Fatalf("the trusted engine lists %v, want %v", got, want)
	}
}

// On a state dir other machines share (NFS, SMB, 9p, FUSE), file
// notifications never report another machine's changes: the watcher polls
// every directory, the state dir included, whatever mode was asked for, and
// says why. Shown with the type injected (nfs) and with a real FUSE mount
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
	if w.mode != ModePoll || !w.stateByMtime || !strings.Contains(w.Stats().Note, fsName) {
		t.Fatalf("mode %s, state dir by mtime %v, note %q: want poll, by mtime, a note naming %s", w.mode, w.stateByMtime, w.Stats().Note, fsName)
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
