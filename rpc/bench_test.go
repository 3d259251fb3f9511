package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
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

// Goals: 2,000 concurrent requests all answered; a 4 GB Content-Length
// costs no memory; a warm listing through the binary <= 8 ms at 1,000
// sessions and <= 60 ms at 10,000 (measured through the Node client by
// `make bench`; the Wire benchmarks here are the server's share). Spawn to
// first answer is BenchmarkSpawnToFirstAnswer in cmd/sessionlocks.

// benchServer is what `serve` runs for an IDE: an engine and a watcher over
// n sessions (one in ten with a stale lock) untouched for an hour, as a
// user's are.
func benchServer(b *testing.B, n int) (Options, *sessionlocks.Engine) {
	locks := map[string][]int{}
	for i := 0; i < n; i += 10 {
		locks[fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)] = []int{deadPID + i}
	}
	dir := makeState(b, n, locks)
	past := time.Now().Add(-time.Hour)
	ents, _ := os.ReadDir(dir)
	for _, de := range ents {
		sd := filepath.Join(dir, de.Name())
		files, _ := os.ReadDir(sd)
		for _, f := range files {
			os.Chtimes(filepath.Join(sd, f.Name()), past, past)
		}
		os.Chtimes(sd, past, past)
	}
	e, w := watchedEngine(b, dir)
	return Options{Engine: e, Watcher: w, Logger: discardLog}, e
}

// BenchmarkListSessions1000 is one listSessions over 1,000 sessions through
// the real codec over io.Pipe, warm, with the Go client decoding the answer.
func BenchmarkListSessions1000(b *testing.B) {
	opts, _ := benchServer(b, 1000)
	c := connect(b, opts, ClientOptions{})
	waitStarted(b, opts.Watcher.(*watch.Watcher))
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

// BenchmarkListSessionsWire is the same without a decoding client: the
// request's bytes go in, the answer's frame is read and dropped, so this is
// the server's time (engine + encoding + framing) as any client sees it.
func BenchmarkListSessionsWire(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			serverEnd, clientEnd := net.Pipe()
			defer clientEnd.Close()
			opts, _ := benchServer(b, n)
			go NewServer(opts).Serve(context.Background(), serverEnd)
			waitStarted(b, opts.Watcher.(*watch.Watcher))
			req := []byte(frame(`{"jsonrpc":"2.0","id":1,"method":"listSessions"}`))
			r := bufio.NewReaderSize(clientEnd, 1<<20)
			b.SetBytes(int64(roundTrip(b, clientEnd, r, req)))
			b.ReportAllocs()
			for b.Loop() {
				roundTrip(b, clientEnd, r, req)
			}
		})
	}
}

// roundTrip sends req and reads one Content-Length frame, returning its size.
func roundTrip(b *testing.B, w io.Writer, r *bufio.Reader, req []byte) int {
	if _, err := w.Write(req); err != nil {
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

// BenchmarkListSessions1000Engine is the engine's share of the above.
func BenchmarkListSessions1000Engine(b *testing.B) {
	opts, e := benchServer(b, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := opts.Watcher.(*watch.Watcher)
	go w.Run(ctx, func(watch.Change) {})
	waitStarted(b, w)
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
