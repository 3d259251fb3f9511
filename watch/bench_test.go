//go:build unix

package watch

// Push latency, poll mode's cost and the idle watcher's footprint.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// The latency benchmarks report custom metrics (p50-ms, p99-ms); their
// ns/op includes setup such as spawning a CLI and means little. Run with
//
//	go test -run '^$' -bench 'Latency' -benchtime 50x ./watch/
//
// (BenchmarkPollLatency takes about a second per iteration: -benchtime 20x;
// BenchmarkIdle about six seconds per mode and size: -benchtime 1x.)

// stamped is a change and the moment notify received it.
type stamped struct {
	at time.Time
	c  Change
}

// benchWatcher runs a watcher whose every change is sent, time-stamped, on
// the returned channel, and returns a function stopping it.
func benchWatcher(b *testing.B, dir string, mode Mode, interval time.Duration) (*Watcher, <-chan stamped, func()) {
	b.Helper()
	e := sessionlocks.New(sessionlocks.Options{StateDir: dir, Settle: 300 * time.Millisecond})
	w, err := New(e, Options{Mode: mode, PollInterval: interval, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ch := make(chan stamped, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, func(c Change) { ch <- stamped{time.Now(), c} }) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				b.Errorf("Run: %v", err)
			}
		})
	}
	b.Cleanup(stop)
	select {
	case <-w.Started():
	case <-time.After(time.Minute):
		b.Fatal("watcher did not start")
	}
	return w, ch, stop
}

// await returns when a change shows session id as wanted: locked (with a
// holder), free, or in a state.
func await(b *testing.B, ch <-chan stamped, id string, want string) time.Time {
	b.Helper()
	timeout := time.After(waitTimeout)
	for {
		select {
		case s := <-ch:
			for _, x := range s.c.Changed {
				if x.ID == id && (want == "locked" && len(x.Holders) > 0 || want == string(x.State)) {
					return s.at
				}
			}
		case <-timeout:
			b.Fatalf("no notification of %s becoming %s within %v", id, want, waitTimeout)
		}
	}
}

func reportLatency(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	q := func(p float64) float64 {
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(q(0.50), name+"-p50-ms")
	b.ReportMetric(q(0.99), name+"-p99-ms")
}

// BenchmarkLockLatency: a lock file created, then removed -> the notification.
func BenchmarkLockLatency(b *testing.B) {
	dir := b.TempDir()
	id := sessionID(1)
	mkSession(b, dir, id, "bench")
	for i := range 100 {
		mkSession(b, dir, sessionID(1000+i), "idle")
	}
	_, ch, _ := benchWatcher(b, dir, ModeNotify, 0)
	pid := strconv.Itoa(os.Getpid())
	lock := filepath.Join(dir, id, "inuse."+pid+".lock")
	var created, removed []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := os.WriteFile(lock, []byte(pid+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		created = append(created, await(b, ch, id, "locked").Sub(t0))
		t0 = time.Now()
		if err := os.Remove(lock); err != nil {
			b.Fatal(err)
		}
		removed = append(removed, await(b, ch, id, string(sessionlocks.StateFree)).Sub(t0))
	}
	reportLatency(b, "created", created)
	reportLatency(b, "removed", removed)
}

// BenchmarkKillLatency: a CLI holding a session SIGKILLed (no file changes)
// -> the stale notification.
func BenchmarkKillLatency(b *testing.B) {
	for _, m := range []Mode{ModeNotify, ModePoll} {
		b.Run(string(m), func(b *testing.B) {
			dir := b.TempDir()
			id := sessionID(2)
			mkSession(b, dir, id, "victim")
			_, ch, _ := benchWatcher(b, dir, m, 0)
			var lat []time.Duration
			for range b.N {
				c := startCLI(b, dir, id)
				await(b, ch, id, string(sessionlocks.StateInUse))
				time.Sleep(400 * time.Millisecond) // past the settle window: a killed holder is stale at once
				t0 := time.Now()
				if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, await(b, ch, id, string(sessionlocks.StateStale)).Sub(t0))
				c.cmd.Wait()
				for _, ext := range []string{".lock", ".hold"} {
					os.Remove(filepath.Join(dir, id, "inuse."+strconv.Itoa(c.pid)+ext))
				}
				await(b, ch, id, string(sessionlocks.StateFree))
			}
			reportLatency(b, "stale", lat)
		})
	}
}

// BenchmarkPollLatency: poll mode, a lock created in a session nobody
// watches -> the notification, found by the directory mtime scan.
func BenchmarkPollLatency(b *testing.B) {
	dir := b.TempDir()
	const n = 1000
	for i := range n {
		age(b, mkSession(b, dir, sessionID(i), "idle"), i)
	}
	_, ch, _ := benchWatcher(b, dir, ModePoll, DefaultPollInterval)
	pid := strconv.Itoa(os.Getpid())
	var lat []time.Duration
	for i := range b.N {
		id := sessionID(i % n)
		lock := filepath.Join(dir, id, "inuse."+pid+".lock")
		// Land at a random point of the scan interval.
		time.Sleep(time.Duration(i*7919%1000) * time.Millisecond)
		t0 := time.Now()
		if err := os.WriteFile(lock, []byte(pid+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, await(b, ch, id, "locked").Sub(t0))
		os.Remove(lock)
		await(b, ch, id, string(sessionlocks.StateFree))
	}
	reportLatency(b, "created", lat)
}

// BenchmarkIdle: 1,000 and 10,000 sessions (1% locked) watched; reports
// the descriptors the watcher added, the time to its baseline, and the CPU
// it uses while nothing happens.
func BenchmarkIdle(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("counts descriptors in /proc/self/fd")
	}
	for _, n := range []int{1000, 10000} {
		dir := b.TempDir()
		makeSessions(b, dir, n)
		for _, m := range []Mode{ModePoll, ModeNotify} {
			b.Run(fmt.Sprintf("%s/%d", m, n), func(b *testing.B) {
				for range b.N {
					runtime.GC()
					fds0 := openFDs(b)
					t0 := time.Now()
					w, _, stop := benchWatcher(b, dir, m, DefaultPollInterval)
					baseline := time.Since(t0)
					fds := openFDs(b) - fds0
					time.Sleep(500 * time.Millisecond) // let startup garbage settle
					cpu0, wall0 := cpuTime(b), time.Now()
					time.Sleep(5 * time.Second)
					cpu := cpuTime(b) - cpu0
					wall := time.Since(wall0)
					st := w.Stats()
					b.ReportMetric(float64(fds), "fds")
					b.ReportMetric(float64(st.Dirs), "watched-dirs")
					b.ReportMetric(float64(baseline)/float64(time.Millisecond), "baseline-ms")
					b.ReportMetric(100*float64(cpu)/float64(wall), "idle-cpu-%")
					stop()
				}
			})
		}
	}
}

// BenchmarkPollTick: what poll mode does every interval, a listing of every
// session compared with the last, at 1,000 and 10,000 sessions (1% locked).
func BenchmarkPollTick(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		dir := b.TempDir()
		makeSessions(b, dir, n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			w, err := New(sessionlocks.New(sessionlocks.Options{StateDir: dir}), Options{Mode: ModePoll})
			if err != nil {
				b.Fatal(err)
			}
			l := newLoop(w, func(Change) {})
			defer l.close()
			ctx := context.Background()
			l.listAll(ctx, &Change{}) // the baseline
			b.ResetTimer()
			for range b.N {
				var c Change
				if err := l.listAll(ctx, &c); err != nil || len(c.Changed)+len(c.Removed) != 0 {
					b.Fatalf("poll tick: %v, %d changed, %d removed; want nothing", err, len(c.Changed), len(c.Removed))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/tick")
		})
	}
}

// makeSessions makes n sessions in dir, 1% of them locked by this process,
// aged as a real state dir's are.
func makeSessions(b *testing.B, dir string, n int) {
	pid := strconv.Itoa(os.Getpid())
	for i := range n {
		sd := mkSession(b, dir, sessionID(i), "s")
		if i%100 == 0 {
			os.WriteFile(filepath.Join(sd, "inuse."+pid+".lock"), []byte(pid+"\n"), 0o644)
		}
		age(b, sd, i)
	}
}

// age gives session i's directory the mtime of a session last used up to
// 30 days ago, as a real state dir's sessions mostly are (1% of them within
// the hour).
func age(b *testing.B, dir string, i int) {
	d := time.Duration(i*7919%(30*24*60)) * time.Minute
	if i%100 == 1 {
		d = time.Duration(i%50) * time.Minute
	}
	t := time.Now().Add(-d)
	for _, p := range []string{filepath.Join(dir, "workspace.yaml"), dir} {
		if err := os.Chtimes(p, t, t); err != nil {
			b.Fatal(err)
		}
	}
}

func openFDs(b *testing.B) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		b.Fatal(err)
	}
	return len(ents)
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
