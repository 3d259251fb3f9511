package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
	"github.com/copilot-ide/sessionlocks/watch"
)

// Goals (issue 3): 2,000 concurrent requests all answered; a 4 GB
// Content-Length costs no memory; listSessions over 1,000 sessions fast
// (the goal, <= 5 ms warm, is through the Node client; see
// npm/test/sidecar.test.mjs for that measurement). Spawn to first answer is
// BenchmarkSpawnToFirstAnswer in cmd/sessionlocks.

// benchServer is what `serve` runs for an IDE: an engine and a watcher over
// 1,000 sessions (100 of them with a stale lock) untouched for an hour, as a
// user's are. Directories written within the engine's racy window are read
// again on every listing, which is not the warm path being measured.
func benchServer(b *testing.B) (Options, *sessionlocks.Engine) {
	locks := map[string][]int{}
	for i := 0; i < 1000; i += 10 {
		locks[fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)] = []int{deadPID + i}
	}
	dir := makeState(b, 1000, locks)
	past := time.Now().Add(-time.Hour)
	ents, _ := os.ReadDir(dir)
	for _, de := range ents {
		os.Chtimes(filepath.Join(dir, de.Name()), past, past)
	}
	e, w := watchedEngine(b, dir)
	return Options{Engine: e, Watcher: w, Logger: discardLog}, e
}

// waitTrusted waits until e trusts its watcher, so that a warm benchmark
// measures the listing the IDE gets once start-up is over, not the scans
// beside the watcher's confirmation of its first listing.
func waitTrusted(b *testing.B, e *sessionlocks.Engine) {
	for deadline := time.Now().Add(10 * time.Second); !e.Caches().Watched(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the engine does not trust the watcher 10 s after start")
		}
	}
}

// BenchmarkListSessions1000 is one listSessions over 1,000 sessions through
// the real codec over io.Pipe, warm, with the Go client decoding the answer.
func BenchmarkListSessions1000(b *testing.B) {
	opts, e := benchServer(b)
	c := connect(b, opts, ClientOptions{})
	waitTrusted(b, e)
	ctx := context.Background()
	var raw json.RawMessage
	if err := c.Call(ctx, MethodListSessions, nil, &raw); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := c.Call(ctx, MethodListSessions, nil, &raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListSessions1000Wire is the same without a decoding client: the
// request's bytes go in, the answer's frame is read and dropped, so this is
// the server's time (engine + encoding + framing) as any client sees it.
func BenchmarkListSessions1000Wire(b *testing.B) {
	serverEnd, clientEnd := Pipe()
	defer clientEnd.Close()
	opts, e := benchServer(b)
	go NewServer(opts).Serve(context.Background(), serverEnd)
	waitTrusted(b, e)
	req := []byte(frame(`{"jsonrpc":"2.0","id":1,"method":"listSessions"}`))
	r := bufio.NewReaderSize(clientEnd, 1<<20)
	roundTrip := func() int {
		if _, err := clientEnd.Write(req); err != nil {
			b.Fatal(err)
		}
		var n int
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			} else if line == "\r\n" {
				break
			}
		}
		if _, err := r.Discard(n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	b.SetBytes(int64(roundTrip()))
	b.ReportAllocs()
	for b.Loop() {
		roundTrip()
	}
}

// BenchmarkListSessions1000Engine is the engine's share of the above.
func BenchmarkListSessions1000Engine(b *testing.B) {
	opts, e := benchServer(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go opts.Watcher.Run(ctx, func(watch.Change) {})
	waitTrusted(b, e)
	e.List(ctx, sessionlocks.ListOptions{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.List(ctx, sessionlocks.ListOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConcurrent2000 sends 2,000 requests at once (canResume, a
// listSessions page and status in turn) and waits for every answer.
func BenchmarkConcurrent2000(b *testing.B) {
	dir := makeState(b, 20, map[string][]int{"00000003-0000-4000-8000-000000000000": {deadPID}})
	c := connect(b, Options{Engine: engineFor(dir)}, ClientOptions{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var wg sync.WaitGroup
		var failed sync.Once
		for i := 0; i < 2000; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := mixedCall(ctx, c, i); err != nil {
					failed.Do(func() { b.Error(err) })
				}
			}()
		}
		wg.Wait()
	}
}

// BenchmarkHugeContentLength streams past a message announcing 4 GB and
// reports the bytes allocated per run (alloc-B): constant, not 4 GB.
func BenchmarkHugeContentLength(b *testing.B) {
	var total uint64
	n := 0
	for b.Loop() {
		alloc, _ := serveHuge(b, 4<<30)
		total += alloc
		n++
	}
	b.ReportMetric(float64(total)/float64(n), "alloc-B/op")
}
