package rpc

// Review: a request cancelled while it waits in the queue starts at once,
// as a quick one, to answer "cancelled", whatever the number of quick
// requests already running. Its answer then waits for a client that does
// not read, on a goroutine of its own: a client that sends requests and
// cancels each, and never reads, grows the server's goroutines (and so its
// memory) without bound.

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"
)

func TestCancelledQueuedRequestsAreBounded(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe() // never read
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	before := runtime.NumGoroutine()
	go func() {
		NewServer(Options{Engine: engineFor(t.TempDir()), Logger: discardLog}).Serve(ctx, ReadWriteCloser(inR, outW))
		close(done)
	}()
	defer func() { cancel(); inW.Close(); outR.Close(); <-done }()
	const n = 5000
	for i := range n {
		if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"listSessions"}`+"\n"+
			`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":%d}}`+"\n", i, i); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if extra := runtime.NumGoroutine() - before; extra > 2*maxRunning+50 {
		t.Errorf("%d goroutines for %d cancelled requests nobody reads the answers of; want at most about %d", extra, n, 2*maxRunning)
	}
}
