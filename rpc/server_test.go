package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/syncbuf"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
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
	// This system's kind of path, absolute: on Windows a POSIX one says WSL
	// wrote it, and one without a drive says nothing.
	ws := fmt.Sprintf("id: %s\ncwd: %s\nname: session %s\ncreated_at: 2026-01-01T10:00:00.000Z\nupdated_at: 2026-01-02T10:00:00.000Z\n", id, filepath.VolumeName(os.TempDir())+filepath.FromSlash("/home/dev/"+id), id)
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
	serverEnd, clientEnd := net.Pipe()
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
	late := make(chan *Error, 1)
	c := connect(t, Options{Engine: engineFor(makeState(t, 0, nil))}, ClientOptions{
		OnLateAnswer: func(method string, _ json.RawMessage, err *Error) { late <- err },
	})

	// Through the client: cancelling the context sends $/cancelRequest,
	// and Call returns at once; the server's answer (-32800, nothing was
	// done) still reaches the client, through OnLateAnswer.
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "test.sleep", map[string]any{"ms": 60_000}, nil) }()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call after cancel: %v", err)
	}
	select {
	case e := <-late:
		if e == nil || e.Code != CodeRequestCancelled {
			t.Errorf("late answer %v, want -32800", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the answer to the cancelled call never reached OnLateAnswer")
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

// TestEnumsMatchEngine keeps the wire enums' schema tags and the engine's
// constants in step.
func TestEnumsMatchEngine(t *testing.T) {
	states := []sessionlocks.State{sessionlocks.StateFree, sessionlocks.StateInUse, sessionlocks.StateUnknown, sessionlocks.StateStale}
	verdicts := []sessionlocks.Verdict{sessionlocks.Live, sessionlocks.Stale, sessionlocks.Unknown}
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
		{Holder{}, "Reason", str(sessionlocks.AllReasons)},
		{Holder{}, "Verdict", str(verdicts)},
		{Session{}, "State", str(states)},
		{CanResumeResult{}, "State", str(states)},
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

// TestDebugLogTimesCallAndReply: the debug log is what someone reads to
// find out why a listing was slow, and a listSessions answer is encoded and
// written after its call returns, so the log must give both halves.
func TestDebugLogTimesCallAndReply(t *testing.T) {
	var logs syncbuf.Buffer
	opts := Options{
		Engine: engineFor(makeState(t, 200, nil)),
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	out := serveBytes(t, opts, []byte(`{"jsonrpc":"2.0","id":7,"method":"listSessions"}`+"\n"))
	if !json.Valid(out) || !bytes.Contains(out, []byte(`"id":7,"result"`)) {
		t.Fatalf("no answer to the listing: %.200q", out)
	}
	var found bool
	for _, line := range bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n")) {
		var rec struct {
			Msg     string   `json:"msg"`
			Method  string   `json:"method"`
			Ms      *float64 `json:"ms"`
			ReplyMs *float64 `json:"replyMs"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Msg != "request answered" || rec.Method != "listSessions" {
			continue
		}
		found = true
		if rec.Ms == nil || rec.ReplyMs == nil {
			t.Errorf("the log gives ms %v and replyMs %v; it needs both: %s", rec.Ms, rec.ReplyMs, line)
		} else if *rec.ReplyMs <= 0 {
			t.Errorf("encoding and sending 200 sessions took %vms by the log; it cannot have taken no time: %s", *rec.ReplyMs, line)
		}
	}
	if !found {
		t.Fatalf("no \"request answered\" line for listSessions in the debug log:\n%s", logs.Bytes())
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

// TestNewServerRefusesANilEngine: a nil engine is refused at construction,
// not at the first request.
func TestNewServerRefusesANilEngine(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewServer accepted a nil engine")
		}
	}()
	NewServer(Options{})
}

// TestEmptyExpectKeepsAnUnprovenHolder (issue 23, item 1): an IDE that lost
// the canResume answer and sends expect "" gets -32602, and the lock of a
// running process (this test's own, judged afresh) stays; the same call
// with expect null, which sets no precondition, removes it.
func TestEmptyExpectKeepsAnUnprovenHolder(t *testing.T) {
	dir := t.TempDir()
	writeSession(t, dir, "s", []int{os.Getpid()})
	lock := filepath.Join(dir, "s", fmt.Sprintf("inuse.%d.lock", os.Getpid()))
	c := connect(t, Options{Engine: engineFor(dir)}, ClientOptions{})
	ctx := context.Background()
	e := wantCode(t, c.Call(ctx, MethodForceResume, map[string]any{"sessionId": "s", "expect": ""}, nil), CodeInvalidParams)
	if !strings.Contains(string(*e.Data), `"field":"expect"`) {
		t.Errorf("the error does not name expect: %s %s", e.Message, *e.Data)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("expect \"\" removed the holder's lock: %v", err)
	}
	var r ForceResumeResult
	if err := c.Call(ctx, MethodForceResume, map[string]any{"sessionId": "s", "expect": nil}, &r); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) || len(r.Removed) != 1 {
		t.Fatalf("with expect null the lock should go: removed %d, stat %v", len(r.Removed), err)
	}
}

// TestMutationSentAsNotificationDoesNothing: a forceResume or reclaimStale
// without an id can be neither answered nor cancelled, so it must not act.
func TestMutationSentAsNotificationDoesNothing(t *testing.T) {
	dir := makeState(t, 1, map[string][]int{"00000000-0000-4000-8000-000000000000": {deadPID}})
	lock := filepath.Join(dir, "00000000-0000-4000-8000-000000000000", fmt.Sprintf("inuse.%d.lock", deadPID))
	old := time.Now().Add(-time.Hour)
	os.Chtimes(lock, old, old)
	c := connect(t, Options{Engine: engineFor(dir)}, ClientOptions{})
	ctx := context.Background()
	c.Notify(ctx, MethodReclaimStale, map[string]any{})
	c.Notify(ctx, MethodForceResume, map[string]any{"sessionId": "00000000-0000-4000-8000-000000000000", "token": "x"})
	var st StatusResult
	if err := c.Call(ctx, MethodStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := os.Stat(lock); err != nil {
			t.Fatalf("a notification removed a lock: %v", err)
		}
		time.Sleep(25 * time.Millisecond)
	}
	var r ReclaimStaleResult
	if err := c.Call(ctx, MethodReclaimStale, map[string]any{}, &r); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lock); err == nil {
		t.Fatal("the same reclaimStale as a request left the stale lock")
	}
}
