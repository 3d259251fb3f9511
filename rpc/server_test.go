package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/syncbuf"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
	"github.com/copilot-ide/sessionlocks/watch"
)

// deadPID is far above any pid_max, so no process can have it.
const deadPID = 2147483000

// makeState builds a state directory: sessions with workspace.yaml and, for
// each pid in locks[id], an inuse.<pid>.lock.
func makeState(t testing.TB, n int, locks map[string][]int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "session-state")
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		writeSession(t, dir, id, locks[id])
	}
	return dir
}

func writeSession(t testing.TB, dir, id string, pids []int) {
	t.Helper()
	sd := filepath.Join(dir, id)
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := fmt.Sprintf("id: %s\ncwd: /home/dev/%s\nname: session %s\ncreated_at: 2026-01-01T10:00:00.000Z\nupdated_at: 2026-01-02T10:00:00.000Z\n", id, id, id)
	if err := os.WriteFile(filepath.Join(sd, "workspace.yaml"), []byte(ws), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := os.WriteFile(filepath.Join(sd, fmt.Sprintf("inuse.%d.lock", pid)), []byte(fmt.Sprintf("%d\n", pid)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// connect runs a server over io.Pipe and returns a client speaking to it.
func connect(t testing.TB, opts Options, copts ClientOptions) *Client {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = discardLog
	}
	if copts.Logger == nil {
		copts.Logger = discardLog
	}
	serverEnd, clientEnd := Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewServer(opts).Serve(ctx, serverEnd) }()
	c := NewClient(clientEnd, copts)
	t.Cleanup(func() {
		c.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("server did not stop within 5s of the client closing")
		}
		cancel()
	})
	return c
}

func engineFor(dir string) *sessionlocks.Engine {
	return sessionlocks.New(sessionlocks.Options{StateDir: dir, Logger: discardLog})
}

// withTestMethods adds methods that only tests need (a slow one, a
// panicking one) to the table for the duration of a test.
func withTestMethods(t *testing.T) (started chan string) {
	type sleepParams struct {
		Ms  int    `json:"ms"`
		Tag string `json:"tag,omitempty"`
	}
	started = make(chan string, 10)
	saved := Methods
	Methods = append(slices.Clip(Methods),
		method("test.sleep", "Sleeps until ms pass or the request is cancelled.", nil,
			func(_ *Server, ctx context.Context, p *sleepParams) (*StatusParams, error) {
				started <- p.Tag
				select {
				case <-time.After(time.Duration(p.Ms) * time.Millisecond):
					return &StatusParams{}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}),
		method("test.panic", "Panics.", nil,
			func(*Server, context.Context, *StatusParams) (*StatusParams, error) {
				var m map[string]int
				m["boom"]++ // a real nil-map panic, as a bug would cause
				return nil, nil
			}),
	)
	t.Cleanup(func() { Methods = saved })
	return started
}

func wantCode(t *testing.T, err error, code int64) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want a JSON-RPC error %d, got %v", code, err)
	}
	if e.Code != code {
		t.Fatalf("want code %d, got %d: %s", code, e.Code, e.Message)
	}
	return e
}

func TestSlowRequestDoesNotBlockOthers(t *testing.T) {
	started := withTestMethods(t)
	c := connect(t, Options{Engine: engineFor(makeState(t, 2, nil))}, ClientOptions{})
	ctx := context.Background()

	slow := make(chan error, 1)
	go func() { slow <- c.Call(ctx, "test.sleep", map[string]any{"ms": 60_000, "tag": "slow"}, nil) }()
	<-started
	var list ListSessionsResult
	if err := c.Call(ctx, MethodListSessions, nil, &list); err != nil {
		t.Fatalf("listSessions while a slow request runs: %v", err)
	}
	if list.Total != 2 {
		t.Errorf("total = %d, want 2", list.Total)
	}
	select {
	case err := <-slow:
		t.Fatalf("the slow request finished early: %v", err)
	default:
	}
}

func TestCancelRequest(t *testing.T) {
	started := withTestMethods(t)
	c := connect(t, Options{Engine: engineFor(makeState(t, 0, nil))}, ClientOptions{})

	// Through the client: cancelling the context sends $/cancelRequest.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "test.sleep", map[string]any{"ms": 60_000}, nil) }()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call after cancel: %v", err)
	}

	// By hand, as the IDE does: the request answers -32800.
	go func() {
		errc <- c.Call(context.Background(), "test.sleep", map[string]any{"ms": 60_000, "tag": "by-hand"}, nil)
	}()
	for tag := range started {
		if tag == "by-hand" {
			break
		}
	}
	// Ids are assigned in order: the by-hand request is the second call.
	if err := c.Notify(context.Background(), NotifyCancelRequest, map[string]any{"id": 2}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		wantCode(t, err, CodeRequestCancelled)
	case <-time.After(10 * time.Second):
		t.Fatal("$/cancelRequest did not cancel the request")
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	withTestMethods(t)
	c := connect(t, Options{Engine: engineFor(makeState(t, 0, nil))}, ClientOptions{})
	err := c.Call(context.Background(), "test.panic", nil, nil)
	e := wantCode(t, err, CodeInternalError)
	if !strings.Contains(e.Message, "panicked") || !strings.Contains(e.Message, "nil map") {
		t.Errorf("message %q does not say what happened", e.Message)
	}
	var st StatusResult
	if err := c.Call(context.Background(), MethodStatus, nil, &st); err != nil {
		t.Fatalf("status after a panic: %v", err)
	}
}

// TestEOFStillAnswers: a client that writes a request and closes its end
// (echo '...' | sessionlocks serve) still gets the answer.
func TestEOFStillAnswers(t *testing.T) {
	withTestMethods(t)
	opts := Options{Engine: engineFor(makeState(t, 0, nil)), Logger: discardLog}
	out := serveBytes(t, opts, []byte(`{"jsonrpc":"2.0","id":1,"method":"test.sleep","params":{"ms":100}}`+"\n"))
	if !bytes.Contains(out, []byte(`"id":1,"result":{}`)) {
		t.Fatalf("the answer to a request read before EOF was lost: %q", out)
	}
	// A request that outlives the drain window is cancelled, and says so.
	opts.DrainTimeout = 50 * time.Millisecond
	start := time.Now()
	out = serveBytes(t, opts, []byte(`{"jsonrpc":"2.0","id":2,"method":"test.sleep","params":{"ms":60000}}`+"\n"))
	if !bytes.Contains(out, []byte(`"code":-32800`)) {
		t.Fatalf("a request cancelled at EOF did not answer -32800: %q", out)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Serve took %v to return after EOF", d)
	}
}

func TestConcurrentRequestsAllAnswered(t *testing.T) {
	dir := makeState(t, 20, map[string][]int{"00000003-0000-4000-8000-000000000000": {deadPID}})
	c := connect(t, Options{Engine: engineFor(dir)}, ClientOptions{})
	const n = 2000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- mixedCall(context.Background(), c, i)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// mixedCall makes the i'th of a mix of calls against a state dir from
// makeState(t, 20, ...): canResume, a listSessions page and status in turn.
func mixedCall(ctx context.Context, c *Client, i int) error {
	switch i % 3 {
	case 0:
		var r CanResumeResult
		return c.Call(ctx, MethodCanResume, map[string]string{"sessionId": fmt.Sprintf("%08d-0000-4000-8000-000000000000", i%20)}, &r)
	case 1:
		var r ListSessionsResult
		if err := c.Call(ctx, MethodListSessions, map[string]any{"limit": 5}, &r); err != nil {
			return err
		}
		if r.Total != 20 || len(r.Sessions) != 5 {
			return fmt.Errorf("listSessions: total %d, %d sessions", r.Total, len(r.Sessions))
		}
		return nil
	default:
		return c.Call(ctx, MethodStatus, nil, nil)
	}
}

// TestHugeContentLength: a 4 GB Content-Length is streamed past, not
// buffered: the bytes allocated while discarding it are a tiny fraction of it.
func TestHugeContentLength(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 4 GB")
	}
	const huge = 4 << 30
	alloc, out := serveHuge(t, huge)
	if !bytes.Contains(out, []byte(`"code":-32600,"message":"message too large: 4294967296 bytes exceeds the limit of 8 MiB (8388608 bytes)`)) {
		t.Errorf("no error naming the limit: %.300q", out)
	}
	if !bytes.Contains(out, []byte(`"id":2,"result"`)) {
		t.Errorf("the request after the huge message was not answered: %.300q", out)
	}
	if alloc > 4<<20 {
		t.Errorf("allocated %d bytes while discarding a %d-byte message", alloc, int64(huge))
	}
}

// serveHuge sends a request, a message with the given Content-Length (its
// body generated on the fly) and another request; it returns the bytes
// allocated meanwhile and the output.
func serveHuge(t testing.TB, size int64) (uint64, []byte) {
	head := frame(`{"jsonrpc":"2.0","id":1,"method":"status"}`) + fmt.Sprintf("Content-Length: %d\r\n\r\n", size)
	tail := frame(`{"jsonrpc":"2.0","id":2,"method":"status"}`)
	in := io.MultiReader(strings.NewReader(head), &junk{n: size}, strings.NewReader(tail))
	var out syncbuf.Buffer
	opts := Options{Engine: engineFor(t.TempDir()), Logger: discardLog}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := NewServer(opts).Serve(context.Background(), ReadWriteCloser(io.NopCloser(in), &out)); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, out.Bytes()
}

// junk is n bytes of whatever is in the caller's buffer: their content does
// not matter, and not writing them keeps the test fast.
type junk struct{ n int64 }

func (j *junk) Read(p []byte) (int, error) {
	if j.n == 0 {
		return 0, io.EOF
	}
	k := int64(len(p))
	if k > j.n {
		k = j.n
	}
	j.n -= k
	return int(k), nil
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// TestListingAtOnceWithAWatcher: a listSessions sent the moment the server
// starts, while its watcher is still setting up, is answered in full (it
// waits for the watcher's watches and shares its first scan). Under -race it
// also checks that the server's start-up state is set before requests run.
func TestListingAtOnceWithAWatcher(t *testing.T) {
	dir := makeState(t, 50, map[string][]int{"00000007-0000-4000-8000-000000000000": {deadPID}})
	for range 5 {
		e, w := watchedEngine(t, dir)
		c := connect(t, Options{Engine: e, Watcher: w}, ClientOptions{})
		var res ListSessionsResult
		if err := c.Call(context.Background(), MethodListSessions, nil, &res); err != nil {
			t.Fatal(err)
		}
		if res.Total != 50 || len(res.Sessions) != 50 {
			t.Fatalf("total %d, %d sessions; want 50", res.Total, len(res.Sessions))
		}
	}
}

// TestNotificationsWaitForFraming: a change seen before the client has
// said anything is delivered once the framing is known, in that framing.
func TestNotificationsWaitForFraming(t *testing.T) {
	for _, framing := range []Framing{FramingHeader, FramingLine} {
		t.Run(framing.String(), func(t *testing.T) {
			dir := makeState(t, 1, nil)
			e, w := watchedEngine(t, dir)
			notes := make(chan SessionsChangedParams, 10)
			c := connect(t, Options{Engine: e, Watcher: w}, ClientOptions{Framing: framing, OnNotification: sessionsChangedTo(notes)})
			// Once the watcher has its baseline, change a session and wait
			// until the watcher is handing the change over (Notified counts
			// before the call, which then waits for the framing): all before
			// the client has said a word.
			waitFor(t, func() bool { return w.Stats().Watching })
			id := "00000000-0000-4000-8000-000000000000"
			writeSession(t, dir, id, []int{deadPID})
			waitFor(t, func() bool { return w.Stats().Notified > 0 })
			var st StatusResult
			if err := c.Call(context.Background(), MethodStatus, nil, &st); err != nil {
				t.Fatal(err)
			}
			if !st.Watching || st.Watch == nil {
				t.Errorf("status: watching=%v watch=%v", st.Watching, st.Watch)
			}
			select {
			case p := <-notes:
				if len(p.Changed) == 0 || p.Changed[0].ID != id || p.Removed == nil {
					t.Errorf("unexpected notification %+v", p)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no sessionsChanged notification")
			}
		})
	}
}

// TestAnswerNeverUndoesANotification: a listSessions answer made before a
// change, whose sessionsChanged goes out while the answer is on its way,
// is made again rather than sent after the notification (a client that
// rebuilds its view from the answer would otherwise show the old state
// until the session changed again).
func TestAnswerNeverUndoesANotification(t *testing.T) {
	dir := makeState(t, 3, nil)
	id := "00000001-0000-4000-8000-000000000000"
	e, w := watchedEngine(t, dir)
	notified := make(chan struct{}, 10)
	var mu sync.Mutex
	var seen []string // what reached the client, in order
	var answers int
	opts := Options{Engine: e, Watcher: w, testHookAnswered: func(string) {
		mu.Lock()
		answers++
		first := answers == 1
		mu.Unlock()
		if !first {
			return
		}
		// The answer is made: now the session changes, and its
		// notification reaches the client before the answer is sent.
		writeSession(t, dir, id, []int{deadPID})
		select {
		case <-notified:
		case <-time.After(10 * time.Second):
			t.Error("no sessionsChanged for the lock written")
		}
	}}
	c := connect(t, opts, ClientOptions{OnNotification: func(method string, params json.RawMessage) {
		var p SessionsChangedParams
		if method == NotifySessionsChanged && json.Unmarshal(params, &p) == nil {
			for _, s := range p.Changed {
				mu.Lock()
				seen = append(seen, fmt.Sprintf("notified %s with %d holders", s.ID, len(s.Holders)))
				mu.Unlock()
				if s.ID == id && len(s.Holders) == 1 {
					select {
					case notified <- struct{}{}:
					default:
					}
				}
			}
		}
	}})
	waitFor(t, func() bool { return w.Stats().Watching && e.Caches().Watched() })
	var res ListSessionsResult
	if err := c.Call(context.Background(), MethodListSessions, nil, &res); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range res.Sessions {
		if s.ID == id {
			seen = append(seen, fmt.Sprintf("answered %s with %d holders", s.ID, len(s.Holders)))
			if len(s.Holders) != 1 {
				t.Errorf("the answer came after the notification and undid it; the client saw:\n%s", strings.Join(seen, "\n"))
			}
		}
	}
	if answers != 2 {
		t.Errorf("the answer was made %d times, want 2 (once more after the notification)", answers)
	}
}

// TestAnswerUnderAStreamOfChanges: while changes keep coming, a
// listSessions answer is made at most maxAnswerAttempts times, and the last
// attempt holds notifications back until it is sent, so that a client that
// applies what it reads in order ends with every change.
func TestAnswerUnderAStreamOfChanges(t *testing.T) {
	dir := makeState(t, maxAnswerAttempts+1, nil)
	id := func(n int) string { return fmt.Sprintf("%08d-0000-4000-8000-000000000000", n) }
	e, w := watchedEngine(t, dir)
	var mu sync.Mutex
	view := map[string]int{} // holders per session, as a client applying each message in order sees them
	locked := make(chan string, 100)
	var answers int
	heldBack := true
	waitLocked := func(want string, d time.Duration) bool {
		for timeout := time.After(d); ; {
			select {
			case got := <-locked:
				if got == want {
					return true
				}
			case <-timeout:
				return false
			}
		}
	}
	opts := Options{Engine: e, Watcher: w, testHookAnswered: func(string) {
		mu.Lock()
		answers++
		n := answers
		mu.Unlock()
		if n > maxAnswerAttempts {
			return
		}
		// A change after every attempt; its notification reaches the
		// client at once, except after the last attempt, which holds it
		// back until the answer is out.
		writeSession(t, dir, id(n), []int{deadPID})
		// A notification that should come may take a busy machine a while;
		// one that must not come is given 300 ms to show up.
		wait := 5 * time.Second
		if n == maxAnswerAttempts {
			wait = 300 * time.Millisecond
		}
		switch got := waitLocked(id(n), wait); {
		case !got && n < maxAnswerAttempts:
			t.Errorf("attempt %d: no notification for %s", n, id(n))
		case got && n == maxAnswerAttempts:
			heldBack = false
			t.Errorf("the change made during the last attempt was notified before its answer was sent")
		}
	}}
	c := connect(t, opts, ClientOptions{Trace: func(in bool, body []byte) {
		if !in {
			return
		}
		var m struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(body, &m) != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		var notes []string
		if m.Method == NotifySessionsChanged {
			var p SessionsChangedParams
			json.Unmarshal(m.Params, &p)
			for _, s := range p.Changed {
				view[s.ID] = len(s.Holders)
				if len(s.Holders) > 0 {
					notes = append(notes, s.ID)
				}
			}
		} else if len(m.Result) > 0 {
			var r ListSessionsResult
			if json.Unmarshal(m.Result, &r) == nil && r.Sessions != nil {
				clear(view)
				for _, s := range r.Sessions {
					view[s.ID] = len(s.Holders)
				}
			}
		}
		for _, n := range notes {
			locked <- n
		}
	}})
	waitFor(t, func() bool { return w.Stats().Watching && e.Caches().Watched() })
	if err := c.Call(context.Background(), MethodListSessions, nil, new(json.RawMessage)); err != nil {
		t.Fatal(err)
	}
	if heldBack && !waitLocked(id(maxAnswerAttempts), 10*time.Second) {
		t.Fatalf("no notification for the change made during the last attempt")
	}
	mu.Lock()
	defer mu.Unlock()
	if answers != maxAnswerAttempts {
		t.Errorf("the answer was made %d times, want %d", answers, maxAnswerAttempts)
	}
	for n := 1; n <= maxAnswerAttempts; n++ {
		if view[id(n)] != 1 {
			t.Errorf("the client's view has %d holders for %s, whose lock was notified: an answer undid its notification", view[id(n)], id(n))
		}
	}
}

// watchedEngine is an engine for dir and a notify-mode watcher on it, for
// a server to run; the test is skipped where no watcher can be made.
func watchedEngine(t testing.TB, dir string) (*sessionlocks.Engine, *watch.Watcher) {
	t.Helper()
	e := engineFor(dir)
	w, err := watch.New(e, watch.Options{Mode: watch.ModeNotify, Logger: discardLog})
	if err != nil {
		t.Skipf("watcher unavailable: %v", err)
	}
	return e, w
}

// sessionsChangedTo is a client's OnNotification that hands each
// sessionsChanged to notes.
func sessionsChangedTo(notes chan<- SessionsChangedParams) func(string, json.RawMessage) {
	return func(method string, params json.RawMessage) {
		var p SessionsChangedParams
		if method == NotifySessionsChanged && json.Unmarshal(params, &p) == nil {
			notes <- p
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestClientErrors(t *testing.T) {
	dir := makeState(t, 1, nil)
	c := connect(t, Options{Engine: engineFor(dir)}, ClientOptions{Framing: FramingLine})
	ctx := context.Background()
	e := wantCode(t, c.Call(ctx, MethodCanResume, map[string]string{"sessionId": "missing"}, nil), CodeSessionNotFound)
	var data ErrorData
	if err := json.Unmarshal(*e.Data, &data); err != nil || data.SessionID != "missing" || data.StateDir != dir {
		t.Errorf("data = %s", *e.Data)
	}
	wantCode(t, c.Call(ctx, "nope", nil, nil), CodeMethodNotFound)
	var raw json.RawMessage
	if err := c.Call(ctx, MethodCanResume, json.RawMessage(`{"sessionId":"00000000-0000-4000-8000-000000000000"}`), &raw); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"canResume":true`)) {
		t.Errorf("raw result %s", raw)
	}
}

// TestEnumsMatchEngine keeps the wire enums, their schema tags and the
// engine's constants in step.
func TestEnumsMatchEngine(t *testing.T) {
	var reasons []Reason
	for _, r := range sessionlocks.AllReasons {
		reasons = append(reasons, Reason(r))
	}
	if !slices.Equal(reasons, Reasons) {
		t.Errorf("rpc.Reasons %v, engine %v", Reasons, sessionlocks.AllReasons)
	}
	for _, s := range []sessionlocks.State{sessionlocks.StateFree, sessionlocks.StateInUse, sessionlocks.StateUnknown, sessionlocks.StateStale} {
		if !slices.Contains(SessionStates, SessionState(s)) {
			t.Errorf("engine state %q missing from rpc.SessionStates", s)
		}
	}
	for _, v := range []sessionlocks.Verdict{sessionlocks.Live, sessionlocks.Stale, sessionlocks.Unknown} {
		if !slices.Contains(Verdicts, Verdict(v)) {
			t.Errorf("engine verdict %q missing from rpc.Verdicts", v)
		}
	}
	tag := func(typ any, field string) []string {
		f, _ := reflect.TypeOf(typ).FieldByName(field)
		var vals []string
		for _, part := range strings.Split(f.Tag.Get("jsonschema"), ",") {
			if v, ok := strings.CutPrefix(part, "enum="); ok {
				vals = append(vals, v)
			}
		}
		return vals
	}
	str := func(xs any) []string {
		v := reflect.ValueOf(xs)
		out := make([]string, v.Len())
		for i := range out {
			out[i] = v.Index(i).String()
		}
		return out
	}
	for _, c := range []struct {
		typ   any
		field string
		want  []string
	}{
		{Holder{}, "Reason", str(Reasons)},
		{Holder{}, "Verdict", str(Verdicts)},
		{Session{}, "State", str(SessionStates)},
		{CanResumeResult{}, "State", str(SessionStates)},
	} {
		if got := tag(c.typ, c.field); !slices.Equal(got, c.want) {
			t.Errorf("%T.%s enum tag %v, want %v", c.typ, c.field, got, c.want)
		}
	}
}

// TestMethodTable: every method has a summary, struct params and a result,
// and only documented error codes.
func TestMethodTable(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Methods {
		if seen[m.Name] {
			t.Errorf("method %s listed twice", m.Name)
		}
		seen[m.Name] = true
		if m.Summary == "" || m.Params == nil || m.Result == nil || m.call == nil {
			t.Errorf("method %s is incomplete: %+v", m.Name, m)
		}
		if m.Params.Kind() != reflect.Struct {
			t.Errorf("method %s: params are %s, want a struct (named params)", m.Name, m.Params)
		}
		for _, e := range m.Errors {
			if !slices.Contains(ErrorCodes, e) {
				t.Errorf("method %s: error %v not in ErrorCodes", m.Name, e)
			}
		}
	}
}

func TestStreamFramingDetection(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Framing
	}{
		{"  \r\n\t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}\n", FramingLine},
		{"[]\n", FramingLine},
		{frame(`{"jsonrpc":"2.0","id":1,"method":"status"}`), FramingHeader},
		{"\n\ncontent-length: 42\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}", FramingHeader},
	} {
		s := NewStream(ReadWriteCloser(io.NopCloser(strings.NewReader(c.in)), &syncbuf.Buffer{}), StreamOptions{Logger: discardLog})
		var v json.RawMessage
		s.ReadObject(&v)
		if got := s.Framing(); got != c.want {
			t.Errorf("%q: framing %v, want %v", c.in, got, c.want)
		}
	}
}

// TestStreamHeaderLimit: an endless header line costs bounded memory and
// gets an answer.
func TestStreamHeaderLimit(t *testing.T) {
	in := "X-Junk: " + strings.Repeat("a", 1<<20) + "\r\n\r\n" + frame(`{"jsonrpc":"2.0","id":1,"method":"status"}`)
	out := serveBytes(t, Options{Engine: engineFor(t.TempDir()), Logger: discardLog}, []byte(in))
	if !bytes.Contains(out, []byte("header block longer than 8192 bytes")) || !bytes.Contains(out, []byte(`"id":1,"result"`)) {
		t.Errorf("output: %.400q", out)
	}
}

// TestDebugLogTimesCallAndEncoding: the debug log is what someone reads to
// find out why a listing was slow, and a listSessions answer is encoded
// after its call returns, so the log must give both halves.
func TestDebugLogTimesCallAndEncoding(t *testing.T) {
	var logs syncbuf.Buffer
	opts := Options{
		Engine: engineFor(makeState(t, 200, nil)),
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	out := serveBytes(t, opts, []byte(`{"jsonrpc":"2.0","id":7,"method":"listSessions","params":{"since":""}}`+"\n"))
	if !json.Valid(out) || !bytes.Contains(out, []byte(`"id":7,"result"`)) {
		t.Fatalf("no answer to the listing: %.200q", out)
	}
	var found bool
	for _, line := range bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n")) {
		var rec struct {
			Msg      string   `json:"msg"`
			Method   string   `json:"method"`
			Ms       *float64 `json:"ms"`
			EncodeMs *float64 `json:"encodeMs"`
			Bytes    int      `json:"bytes"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Msg != "request answered" || rec.Method != "listSessions" {
			continue
		}
		found = true
		if rec.Ms == nil || rec.EncodeMs == nil {
			t.Errorf("the log gives ms %v and encodeMs %v; it needs both: %s", rec.Ms, rec.EncodeMs, line)
		} else if *rec.EncodeMs <= 0 {
			t.Errorf("encoding 200 sessions took %vms by the log; it cannot have taken no time: %s", *rec.EncodeMs, line)
		}
		if sent := len(bytes.TrimSpace(out)); rec.Bytes != sent {
			t.Errorf("the log says %d bytes, the answer sent has %d", rec.Bytes, sent)
		}
	}
	if !found {
		t.Fatalf("no \"request answered\" line for listSessions in the debug log:\n%s", logs.Bytes())
	}
}

// slowStart is a real watcher whose Run starts late, as it does when the
// machine is busy or the state dir is large.
type slowStart struct {
	*watch.Watcher
	delay time.Duration
}

func (s slowStart) Run(ctx context.Context, notify func(watch.Change)) error {
	time.Sleep(s.delay)
	return s.Watcher.Run(ctx, notify)
}

// TestRemovalsWhileTheWatcherStartsArePushed: status says the server is
// watching from the start, so the locks a forceResume or reclaimStale
// removes must be pushed even when the request comes before the watcher has
// read the state dir (it once went unheard: the watcher's first listing
// already lacked the locks, so it saw no change).
func TestRemovalsWhileTheWatcherStartsArePushed(t *testing.T) {
	for _, method := range []string{MethodForceResume, MethodReclaimStale} {
		t.Run(method, func(t *testing.T) {
			id := "00000002-0000-4000-8000-000000000000"
			dir := makeState(t, 3, map[string][]int{id: {deadPID}})
			e, w := watchedEngine(t, dir)
			notes := make(chan SessionsChangedParams, 10)
			c := connect(t, Options{Engine: e, Watcher: slowStart{w, 300 * time.Millisecond}}, ClientOptions{OnNotification: sessionsChangedTo(notes)})
			ctx := context.Background()
			var st StatusResult
			if err := c.Call(ctx, MethodStatus, nil, &st); err != nil {
				t.Fatal(err)
			}
			if !st.Watching {
				t.Fatal("status does not say the server is watching")
			}
			params := map[string]any{"sessionId": id}
			if method == MethodReclaimStale {
				params = map[string]any{"sessionIds": []string{id}}
			}
			if err := c.Call(ctx, method, params, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, id, fmt.Sprintf("inuse.%d.lock", deadPID))); !os.IsNotExist(err) {
				t.Fatalf("%s left the lock: %v", method, err)
			}
			for {
				select {
				case p := <-notes:
					for _, s := range p.Changed {
						if s.ID == id && s.State == SessionState(sessionlocks.StateFree) {
							return
						}
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s removed the lock, and no sessionsChanged said the session is free", method)
				}
			}
		})
	}
}

// TestStatusSaysWhereItJudgesFrom: status names the state dir's file system
// and says when pids prove nothing from here, which is why a session reads
// unknown there (the person debugging needs to see it without reading code).
func TestStatusSaysWhereItJudgesFrom(t *testing.T) {
	for _, tc := range []struct {
		fsType string
		shared bool
	}{{"", false}, {"nfs4", true}, {"fuse.sshfs", true}} {
		t.Run("fs="+tc.fsType, func(t *testing.T) {
			e := sessionlocks.New(sessionlocks.Options{StateDir: makeState(t, 0, nil), Logger: discardLog, FSType: tc.fsType})
			c := connect(t, Options{Engine: e}, ClientOptions{})
			var st StatusResult
			if err := c.Call(context.Background(), MethodStatus, nil, &st); err != nil {
				t.Fatal(err)
			}
			v := e.Status().Platform
			if st.Platform.FileSystem != v.FileSystem || st.Platform.SharedFileSystem != tc.shared || st.Platform.NestedPIDNamespace != v.NestedPIDNamespace {
				t.Errorf("platform %+v, engine sees %+v", st.Platform, v)
			}
			if tc.fsType != "" && st.Platform.FileSystem != tc.fsType {
				t.Errorf("fileSystem %q, want %q", st.Platform.FileSystem, tc.fsType)
			}
		})
	}
}

// TestNewServerRefusesANilEngine: a nil *sessionlocks.Engine inside the
// Engine interface is refused at construction, not at the first request.
func TestNewServerRefusesANilEngine(t *testing.T) {
	for name, e := range map[string]Engine{"nil": nil, "typed nil": (*sessionlocks.Engine)(nil)} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("NewServer accepted a nil engine")
				}
			}()
			NewServer(Options{Engine: e})
		})
	}
}
