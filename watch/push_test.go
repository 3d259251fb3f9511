package watch

// Pushes from file events, process exits and settle ends, in both modes.

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/wine"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

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
		if st, want := f.w.Stats(), map[Mode]int{ModeNotify: 3, ModePoll: 0}[m]; st.Dirs != want || st.Sessions != 2 {
			t.Errorf("Stats = %+v, want %d directories watched and 2 sessions", st, want)
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
		f.waitStats(t, "the holder's process watched (and its launcher, this test, where it is known)", func(s Stats) bool { return s.Processes >= 1 })

		c.stdin.Close() // the fake CLI removes its files and exits
		f.rec.waitSession(t, id, "free again", func(s sessionlocks.Session) bool {
			return s.State == sessionlocks.StateFree && len(s.Holders) == 0
		})
		c.cmd.Wait()
		if f.rec.has(idle) {
			t.Errorf("the idle session was reported though nothing about it changed")
		}
		f.waitStats(t, "no process watched", func(s Stats) bool { return s.Processes == 0 })
	})
}

// A SIGKILLed CLI changes no file: only the exit event (pidfd) reveals it,
// or, where the platform has none, the listing of its session every tick.
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
				f.waitStats(t, "the holder's process watched (and its launcher, this test, where it is known)", func(s Stats) bool { return s.Processes >= 1 })

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
				f.waitStats(t, "no process watched", func(s Stats) bool { return s.Processes == 0 })
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
// them. In notify mode the event reader is held on the first event while
// the sessions are made, so that they reach it as one burst however slowly
// a busy machine makes them; then every pause of debounce within the burst
// is the watcher's own. On Windows this is the burst that froze a watcher
// calling Add from its event reader (fsnotify #656).
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
		if m == ModePoll {
			release() // no file events: found by the listing every tick
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
		if m == ModePoll {
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
		// Events are read in order, so in notify mode once the first
		// sentinel's lock is pushed, the quiet session's writes have been
		// handled too. In poll mode the listing that found that lock may
		// have begun, and read the quiet session, before its last writes;
		// the second sentinel, locked only after the first was pushed, is
		// found by a listing begun after all of them.
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
