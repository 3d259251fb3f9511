package rpc

// Input that costs the server more than it should: names it would echo or
// compare at length, warnings a peer can make it write in a loop.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// rawServer serves over a pipe whose client end the test writes and reads
// by hand, newline-delimited; log collects the server's logs.
func rawServer(t *testing.T, mu *sync.Mutex, log *bytes.Buffer) (send func(string), recv func() []byte) {
	t.Helper()
	serverEnd, clientEnd := net.Pipe()
	opts := Options{Engine: engineFor(t.TempDir()), Logger: discardLog}
	if log != nil {
		opts.Logger = slog.New(slog.NewTextHandler(lockedWriter{mu, log}, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { NewServer(opts).Serve(ctx, serverEnd); close(done) }()
	t.Cleanup(func() { clientEnd.Close(); cancel(); <-done })
	r := bufio.NewReaderSize(clientEnd, 1<<20)
	return func(line string) {
			if _, err := clientEnd.Write([]byte(line + "\n")); err != nil {
				t.Fatal(err)
			}
		}, func() []byte {
			b, err := r.ReadBytes('\n')
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func logLen(mu *sync.Mutex, b *bytes.Buffer) int { mu.Lock(); defer mu.Unlock(); return b.Len() }

func logString(mu *sync.Mutex, b *bytes.Buffer) string {
	mu.Lock()
	defer mu.Unlock()
	return b.String()
}

func TestHugeNamesAreNotEchoed(t *testing.T) {
	send, recv := rawServer(t, nil, nil)
	huge := strings.Repeat("x", 8<<20)
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q}`, huge[:8<<20-100])) // within the message limit
	if a := recv(); len(a) > 1024 || !bytes.Contains(a, []byte("-32601")) {
		t.Errorf("answer to an 8 MB method name: %d bytes: %.200s", len(a), a)
	}
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"status","params":{%q:1}}`, huge[:1<<20]))
	if a := recv(); len(a) > 1024 || !bytes.Contains(a, []byte("-32602")) {
		t.Errorf("answer to a 1 MB parameter name: %d bytes: %.200s", len(a), a)
	}
}

func TestMalformedCancelsAreRateLimited(t *testing.T) {
	testRateLimited(t, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":[%d]}}`)
}

// TestStrayAnswersAreRateLimited: answers to requests the server never made,
// with an id or with null (a peer's error about our output), are logged,
// but a peer that sends them in a loop does not fill the log.
func TestStrayAnswersAreRateLimited(t *testing.T) {
	t.Run("id", func(t *testing.T) { testRateLimited(t, `{"jsonrpc":"2.0","id":%d,"result":1}`) })
	t.Run("null", func(t *testing.T) {
		testRateLimited(t, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"x"}}`)
	})
}

// testRateLimited sends 10,000 messages made from format and an index, and
// checks that they cost a few log lines and a count of those held back.
func testRateLimited(t *testing.T, format string) {
	var log bytes.Buffer
	var mu sync.Mutex
	send, recv := rawServer(t, &mu, &log)
	for i := range 10_000 {
		send(fmt.Sprintf(format, i))
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"status"}`) // all read and handled before it
	recv()
	if n := logLen(&mu, &log); n > 8<<10 {
		t.Errorf("10,000 of %s wrote %d bytes of log", format, n)
	}
	// The count of those held back comes when their second is over.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logString(&mu, &log), "alikeSuppressed=9999") {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not say 9,999 warnings were held back:\n%s", logString(&mu, &log))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAnswersAreValidUTF8(t *testing.T) {
	send, recv := rawServer(t, nil, nil)
	for i, line := range []string{
		"{\"jsonrpc\":\"1.0\",\"id\":\"\xff\xfe\",\"method\":\"status\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"st\xffatus\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"canResume\",\"params\":{\"sessionId\":\"a\xffb\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"canResume\",\"params\":{\"session\xffId\":\"a\"}}",
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\",\"method\":\"nope\"}",
	} {
		send(line)
		if a := recv(); !utf8.Valid(a) {
			t.Errorf("answer %d is not valid UTF-8: %q", i, a)
		}
	}
}

// TestQuickRequestsAreBounded: status runs beside the others, but a client
// that sends thousands and never reads the answers gets no goroutine for
// each: past maxRunning of them the rest wait in the queue.
func TestQuickRequestsAreBounded(t *testing.T) {
	const n = 5000
	extra := goroutinesForUnread(t, n, func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"status"}`+"\n", i)
	})
	if extra > maxRunning+50 {
		t.Errorf("%d goroutines for %d unanswered status requests; want at most about %d", extra, n, maxRunning)
	}
}

// TestCancelledQueuedRequestsAreBounded: a request cancelled while it waits
// in the queue starts at once, as a quick one, to answer "cancelled"; its
// answer then waits for a client that does not read. A client that sends
// requests, cancels each and never reads must not grow the server's
// goroutines (and so its memory) without bound.
func TestCancelledQueuedRequestsAreBounded(t *testing.T) {
	const n = 5000
	extra := goroutinesForUnread(t, n, func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"listSessions"}`+"\n"+
			`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":%d}}`+"\n", i, i)
	})
	if extra > 2*maxRunning+50 {
		t.Errorf("%d goroutines for %d cancelled requests nobody reads the answers of; want at most about %d", extra, n, 2*maxRunning)
	}
}

// goroutinesForUnread sends a server n messages (line(i) each) from a client
// that never reads, and returns how many goroutines the server then has
// beyond those before it started.
func goroutinesForUnread(t *testing.T, n int, line func(i int) string) int {
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
	for i := range n {
		if _, err := io.WriteString(inW, line(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Each line was read once the next one could be written; give the
	// last one a moment to be dispatched.
	time.Sleep(100 * time.Millisecond)
	return runtime.NumGoroutine() - before
}
