//go:build unix

package sessionlocks

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// The probe benchmarks judge one holder with no cache: as a listing does
// (hold, nohold, dead), and as canResume does (decide-*), which also proves
// who holds a live session and, for a dead pid, looks for the lock's writer
// in other PID namespaces (a walk of /proc, made afresh for every decision).
// BenchmarkPSSpawn is the old approach's per-lock cost (copilot-ide spawns
// `ps -p <pid> -o command=` for every lock whose pid answers kill(pid, 0)),
// measured here so that the ratio comes from one run on one machine.
func BenchmarkProbe(b *testing.B) {
	sd := b.TempDir()
	newSession(b, sd, "hold")
	startHolder(b, sd, "hold")
	newSession(b, sd, "nohold")
	startHolder(b, sd, "nohold", "--old")
	deadDir := newSession(b, sd, "dead")
	writeLock(b, deadDir, deadPID(b), time.Now().Add(-time.Minute))
	time.Sleep(200 * time.Millisecond)
	e := New(Options{StateDir: sd, Settle: 100 * time.Millisecond, Logger: quiet})

	for _, tc := range []struct{ name string }{{"hold"}, {"nohold"}, {"dead"}} {
		s := mustSession(b, e, tc.name)
		refs := refsOf(b, e, tc.name)
		if len(refs) != 1 {
			b.Fatalf("%s: %d refs", tc.name, len(refs))
		}
		for _, decide := range []bool{false, true} {
			name, o := tc.name, e.listingOpts()
			if decide {
				name, o = "decide-"+tc.name, e.decisionOpts()
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				var h Holder
				for b.Loop() {
					o.began = time.Now()
					h = e.judge(refs[0], o)
				}
				if h.Verdict != s.Holders[0].Verdict {
					b.Fatalf("verdict changed: %s", h.Verdict)
				}
			})
		}
	}
	b.Run("session-fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			mustSession(b, e, "hold")
		}
	})
}

func BenchmarkPSSpawn(b *testing.B) {
	if _, err := exec.LookPath("ps"); err != nil {
		b.Skip("no ps here")
	}
	pid := fmt.Sprint(os.Getpid())
	for b.Loop() {
		if err := exec.Command("ps", "-p", pid, "-o", "command=").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkList lists generated state dirs the size of a heavy user's (and
// ten times that), 10% of sessions locked: live CLIs, SIGKILLed ones, dead
// old-format locks, reused pids and unverified holders; names quoted as the
// real CLI quotes them (see benchName). "cold" is a new engine each time (no
// cache; the OS page cache is warm, as it is for an IDE that has the
// directory open), "cached" a warm engine within its TTL, "one-changed" the
// listing after the watcher invalidated one session.
func BenchmarkList(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		sd := b.TempDir()
		mix := genStateDir(b, sd, n)
		b.Run(fmt.Sprintf("sessions=%d/cold", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e := New(Options{StateDir: sd, Logger: quiet})
				ss, err := e.List(context.Background(), ListOptions{})
				if err != nil || len(ss) != n {
					b.Fatalf("%d sessions, %v", len(ss), err)
				}
			}
		})
		b.Run(fmt.Sprintf("sessions=%d/cached", n), func(b *testing.B) {
			e := New(Options{StateDir: sd, Logger: quiet, CacheTTL: time.Hour})
			e.List(context.Background(), ListOptions{})
			b.ReportAllocs()
			for b.Loop() {
				ss, err := e.List(context.Background(), ListOptions{})
				if err != nil || len(ss) != n {
					b.Fatalf("%d sessions, %v", len(ss), err)
				}
			}
		})
		b.Run(fmt.Sprintf("sessions=%d/one-changed", n), func(b *testing.B) {
			// What a listing costs after the watcher reported a change to one
			// session's files: the IDE lists again on every sessionsChanged.
			e := New(Options{StateDir: sd, Logger: quiet, CacheTTL: time.Hour})
			ss, _ := e.List(context.Background(), ListOptions{})
			id := ss[len(ss)/2].ID
			b.ReportAllocs()
			for b.Loop() {
				e.Invalidate(id) // as the watcher does
				ss, err := e.List(context.Background(), ListOptions{})
				if err != nil || len(ss) != n {
					b.Fatalf("%d sessions, %v", len(ss), err)
				}
			}
		})
		b.Logf("%d sessions: %v", n, mix)
	}
}

// benchName is session i's name line, styled as the real CLI writes names
// that need quoting: a quarter single-quoted (1.0.65 and later; some with a
// quote doubled inside), one in twenty double-quoted with escapes (1.0.45),
// the rest plain.
func benchName(i int) string {
	switch {
	case i%4 != 1 && i%20 != 3:
		return fmt.Sprintf("name: Refactor the parser %d\n", i)
	case i%8 == 5:
		return fmt.Sprintf("name: 'don''t: retry the parser (session %d)'\n", i)
	case i%4 == 1:
		return fmt.Sprintf("name: 'fix: the parser (session %d)'\n", i)
	default:
		return fmt.Sprintf("name: \"fix: the \\\"parser\\\" (session %d)\"\n", i)
	}
}

// genStateDir writes n sessions in the real CLI's layout, 10% of them locked,
// names as benchName quotes them, and returns how many holders of each
// verdict/reason it made.
func genStateDir(b *testing.B, sd string, n int) map[string]int {
	b.Helper()
	live := 20
	sleeper := startSleeper(b)
	sleeperStart := readProc(sleeper.Process.Pid).start
	old := time.Now().Add(-10 * time.Minute)
	if bt, _ := bootTime(); old.Before(bt) {
		old = bt.Add(time.Second)
	}
	// Directory and file mtimes in the past, as they are on a real machine,
	// so that snapshots may stand for them.
	past := time.Now().Add(-time.Hour)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		dir := filepath.Join(sd, id)
		os.MkdirAll(filepath.Join(dir, "checkpoints"), 0o700)
		os.MkdirAll(filepath.Join(dir, "files"), 0o700)
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format(time.RFC3339Nano)
		yaml := fmt.Sprintf("id: %s\ncwd: %s\nclient_name: cli\n%suser_named: false\nsummary_count: 2\nfork_count: 0\ncreated_at: %s\nupdated_at: %s\n", id, filepath.FromSlash(fmt.Sprintf("/home/dev/src/project-%d", i%37)), benchName(i), ts, ts)
		os.WriteFile(filepath.Join(dir, "workspace.yaml"), []byte(yaml), 0o600)
		os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(`{"type":"session.start"}`+"\n"), 0o600)
		for _, f := range []string{"workspace.yaml", "events.jsonl"} {
			os.Chtimes(filepath.Join(dir, f), past, past)
		}
		if i%10 == 0 {
			switch k := (i / 10) % 5; {
			case k == 0 && live > 0:
				live--
				startHolder(b, sd, id)
			case k <= 1: // SIGKILLed new-format CLI: lock + unlocked hold of a dead pid
				pid := 4000000 + i
				writeLock(b, dir, pid, old)
				writeHold(b, dir, pid, old)
			case k == 2: // dead old-format lock
				writeLock(b, dir, 4000000+i, old)
			case k == 3: // reused pid: a live unrelated process, lock older than it
				writeLock(b, dir, sleeper.Process.Pid, sleeperStart.Add(-5*time.Second))
			default: // unverified: a live unrelated process older than the lock
				writeLock(b, dir, sleeper.Process.Pid, time.Now().Add(-time.Minute))
			}
		}
		os.Chtimes(dir, past, past)
	}
	os.Chtimes(sd, past, past)
	e := New(Options{StateDir: sd, Logger: quiet})
	ss, _ := e.List(context.Background(), ListOptions{})
	mix := map[string]int{}
	for _, s := range ss {
		for _, h := range s.Holders {
			mix[string(h.Verdict)+"/"+string(h.Reason)]++
		}
	}
	keys := make([]string, 0, len(mix))
	for k := range mix {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return mix
}
