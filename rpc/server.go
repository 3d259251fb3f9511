// Package rpc is the JSON-RPC 2.0 surface of sessionlocks: the wire types and
// method table (protocol.go), a hardened stream codec that detects
// Content-Length or newline-delimited framing (stream.go), the server that
// the IDE spawns over stdio (server.go), and a client for `sessionlocks call`,
// the REPL and tests (client.go).
package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/editdist"
	"github.com/copilot-ide/sessionlocks/internal/version"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
	"github.com/copilot-ide/sessionlocks/watch"
	"github.com/sourcegraph/jsonrpc2"
)

// Error is a JSON-RPC error object; calls made with Client return one when
// the server answers with an error.
type Error = jsonrpc2.Error

func newError(code int64, msg string, data *ErrorData) *Error {
	e := &Error{Code: code, Message: msg}
	if data != nil {
		e.SetError(data)
	}
	return e
}

// Watcher is what the server needs of a *watch.Watcher.
type Watcher interface {
	Run(ctx context.Context, notify func(watch.Change)) error
	Stats() watch.Stats
}

// Options configure a Server.
type Options struct {
	// Engine answers every method; required.
	Engine *sessionlocks.Engine
	// Watcher, if set, is run by Serve and its changes are pushed as
	// sessionsChanged notifications.
	Watcher Watcher
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger
	// MaxMessageSize limits one incoming message; 0 means DefaultMaxMessageSize.
	MaxMessageSize int64
	// DrainTimeout is how long, once the input ends, the server waits for
	// running requests to answer before it cancels them; 0 means 500ms, so
	// that the process exits well within a second of stdin closing.
	DrainTimeout time.Duration
	// Trace, if set, sees every message body read or written. It must not
	// retain body: answer buffers are reused.
	Trace func(in bool, body []byte)
	// LogDropped, if set, counts the log lines dropped because nobody read
	// the log; status reports it.
	LogDropped func() uint64

	// sequential handles one request at a time, in order, so that transcript
	// tests get their answers in a deterministic order.
	sequential bool
	// versionNonce, if set, replaces the random part of listSessions
	// versions, so that a transcript can name one in a later request.
	versionNonce string
	// testHookAnswered, if set, is called when an ordered answer has been
	// made and before it is checked against the notifications sent since.
	testHookAnswered func(method string)
}

// Server answers JSON-RPC requests about one state directory.
type Server struct {
	opts     Options
	engine   *sessionlocks.Engine
	log      *slog.Logger
	started  time.Time
	watching atomic.Bool
	sessions sessionJSON // listSessions' encodings, reused while unchanged

	// baseline is closed once the watcher begins its first listing of
	// every session (watch.Watcher.Armed), watched once it has that listing
	// and its watches are in place (watch.Watcher.Started), watchDone once
	// it stopped. Set before serving.
	baseline, watched, watchDone <-chan struct{}
}

// baselineWait bounds how long a request waits for the watcher to start:
// past it, the request goes on without (see awaitBaseline, awaitWatched).
const baselineWait = 2 * time.Second

// awaitBaseline lets a listing that arrives while the watcher is starting
// wait until the watcher lists every session (watch.Watcher.Armed), and
// share that listing (the engine runs one scan for concurrent callers): the
// two would otherwise read every directory cold side by side, each taking
// longer than one alone.
func (s *Server) awaitBaseline(ctx context.Context) error {
	return s.awaitWatcher(ctx, s.baseline)
}

// awaitWatched lets a request that removes locks wait until the watcher has
// its first listing and its watches (watch.Watcher.Started). A lock removed
// earlier could be missing from that listing already, and a client told the
// server is watching would never hear of the change.
func (s *Server) awaitWatched(ctx context.Context) error {
	return s.awaitWatcher(ctx, s.watched)
}

func (s *Server) awaitWatcher(ctx context.Context, ready <-chan struct{}) error {
	if ready == nil {
		return nil
	}
	select {
	case <-ready:
		return nil
	default:
	}
	t := time.NewTimer(baselineWait)
	defer t.Stop()
	select {
	case <-ready:
	case <-s.watchDone:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// NewServer returns a server; it serves nothing until Serve.
func NewServer(opts Options) *Server {
	if opts.Engine == nil {
		panic("rpc.NewServer: Options.Engine is nil")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 500 * time.Millisecond
	}
	s := &Server{opts: opts, engine: opts.Engine, log: opts.Logger, started: time.Now()}
	s.sessions.nonce = opts.versionNonce
	return s
}

// Serve speaks JSON-RPC over rwc until the peer closes its side (it returns
// nil) or ctx is done (it returns ctx.Err()). It runs the watcher, if any,
// for as long; a server with a watcher serves one connection at a time.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	h := newHandler(s)
	stream := NewStream(rwc, StreamOptions{
		MaxMessageSize: s.opts.MaxMessageSize,
		Logger:         s.log,
		Trace:          s.opts.Trace,
		onEOF:          func() { h.drain(s.opts.DrainTimeout) },
	})
	h.stream = stream

	// Set before the connection reads its first request (listSessions
	// reads them).
	var watchDone chan struct{}
	if w := s.opts.Watcher; w != nil {
		watchDone = make(chan struct{})
		s.watchDone = watchDone
		if st, ok := w.(interface{ Armed() <-chan struct{} }); ok {
			s.baseline = st.Armed()
		}
		if st, ok := w.(interface{ Started() <-chan struct{} }); ok {
			s.watched = st.Started()
		}
	}
	var jh jsonrpc2.Handler = h
	conn := jsonrpc2.NewConn(ctx, stream, jh, jsonrpc2.SetLogger(slogPrintf{s.log}))

	if w := s.opts.Watcher; w != nil {
		s.watching.Store(true)
		go func() {
			defer close(watchDone)
			defer s.watching.Store(false)
			vl := verdictLog{log: s.log}
			err := w.Run(ctx, func(c watch.Change) {
				vl.change(c)
				if err := h.notify(NotifySessionsChanged, wireChange(c)); err != nil && ctx.Err() == nil {
					s.log.Warn("sending sessionsChanged failed", "error", err)
				}
			})
			if err != nil && ctx.Err() == nil {
				s.log.Warn("watching stopped; sessionsChanged will not be sent", "error", err)
			}
		}()
	}

	var err error
	select {
	case <-conn.DisconnectNotify():
		s.log.Debug("input closed")
	case <-stream.Broken():
		s.log.Info("output closed; nobody reads the answers any more", "error", stream.BrokenErr())
	case <-ctx.Done():
		err = ctx.Err()
	}
	cancel()
	conn.Close()
	h.cancelAll()
	if watchDone != nil {
		select {
		case <-watchDone:
		case <-time.After(200 * time.Millisecond):
			// Typically blocked writing a notification to a client that
			// stopped reading; the process is about to exit, so not a warning.
			s.log.Debug("watcher did not stop within 200ms")
		}
	}
	return err
}

func (h *handler) serve(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request, m *Method) {
	if req.Notif {
		if _, err := h.call(ctx, req, m); err != nil {
			h.s.log.Warn("notification failed", "method", req.Method, "error", err)
		}
		return
	}
	if m == nil || !m.ordered {
		h.send(h.answer(ctx, req, m))
		return
	}
	// An answer made before a sessionsChanged that was sent while it was
	// being made would reach the client after that notification and undo
	// it in a view rebuilt from the answer: no later notification would put
	// it right. It is made again instead. (A notification sent after the
	// answer describes a change the watcher saw; should the answer already
	// show a later state, the watcher's notification of that follows.)
	//
	// Should changes keep coming, the last attempt holds notifications back
	// while it is made and sent. Nothing an answer waits for waits for a
	// notification to be sent: the watcher's first listing (awaitBaseline)
	// is done before it notifies anything, and a listing shared with the
	// watcher ends before the watcher notifies what it found.
	for attempt := 1; ; attempt++ {
		last := attempt == maxAnswerAttempts
		if last {
			h.order.Lock()
		}
		noted := h.noted.Load()
		a := h.answer(ctx, req, m)
		if hook := h.s.opts.testHookAnswered; hook != nil {
			hook(req.Method)
		}
		if !last {
			h.order.Lock()
		}
		if last || h.noted.Load() == noted {
			h.send(a)
			h.order.Unlock()
			return
		}
		h.order.Unlock()
		a.release()
		h.s.log.Debug("answer made again: sessionsChanged was sent while it was being made", "method", req.Method, "id", req.ID.String(), "attempt", attempt)
	}
}

// maxAnswerAttempts bounds how often an ordered answer is made while
// notifications keep coming; the last attempt holds them back (the watcher
// coalesces bursts, so this takes a change every few milliseconds).
const maxAnswerAttempts = 4

// answer is one request's encoded answer, ready to send.
type answer struct {
	msg    []byte
	pooled *[]byte // msg is in it, with frameRoom bytes in front for writeFramed
	log    *slog.Logger
	slot   chan struct{} // the encoding slot it holds (see handler.encoding), or nil
}

// release returns a pooled answer's buffer unsent, and its encoding slot.
func (a answer) release() {
	if a.pooled != nil && cap(a.msg) <= maxPooledMsg {
		*a.pooled = a.msg[:0]
		msgBufs.Put(a.pooled)
	}
	if a.slot != nil {
		<-a.slot
	}
}

// answer runs the request and encodes its result or error. msg is nil only
// when not even an error could be encoded (it then has been logged).
func (h *handler) answer(ctx context.Context, req *jsonrpc2.Request, m *Method) answer {
	start := time.Now()
	result, err := h.call(ctx, req, m)
	// ms is the call alone; the answer's encoding (for listSessions also
	// the cutting of a delta) comes after it and is logged as encodeMs, so
	// whoever reads a slow listing off the log sees which half was slow.
	// Encoded only when fewer than maxUnwritten answers wait to be
	// written: a client that stops reading costs waiting requests, not
	// megabytes of answers each.
	var slot chan struct{}
	if err == nil {
		done := ctx.Done()
		if m != nil && m.acts {
			done = nil // it acted: its answer says what it did, cancelled or not
		}
		select {
		case h.encoding <- struct{}{}:
			slot = h.encoding
		case <-done:
			// A read cancelled while its answer waited: it answers
			// "cancelled", which is small.
			err = ctx.Err()
		}
	}
	encoding := time.Now()
	log := h.s.log.With("method", req.Method, "id", req.ID.String(), "ms", millis(encoding.Sub(start)))
	var body, msg []byte
	var pooled *[]byte
	if se, ok := result.(selfEncoding); ok && err == nil && se.encoder() != nil {
		// Encoded straight into a reused buffer behind the envelope and
		// room for the frame's header: a listSessions answer is large,
		// asked for often, and allocating or copying it afresh each time
		// made work for the collector.
		buf := msgBufs.Get().(*[]byte)
		if msg, err = appendResultWith(req.ID, append((*buf)[:0], make([]byte, frameRoom)...), se.encoder()); err != nil {
			err = newError(CodeInternalError, "internal error: encoding the result: "+err.Error(), nil)
		} else {
			pooled = buf
		}
	} else if err == nil {
		if body, err = json.Marshal(result); err != nil {
			err = newError(CodeInternalError, "internal error: encoding the result: "+err.Error(), nil)
		}
	}
	if err != nil {
		e := wireErr(ctx, err)
		if e.Code == CodeInternalError {
			log.Error("request failed", "error", err)
		} else {
			log.Debug("request answered with an error", "code", e.Code, "message", e.Message)
		}
		if msg, err = json.Marshal(errorResponse{ID: req.ID, Error: e, JSONRPC: "2.0"}); err != nil {
			log.Error("encoding the error answer failed", "error", err)
			return answer{log: log, slot: slot}
		}
		return answer{msg: msg, log: log, slot: slot}
	}
	if pooled == nil {
		if msg, err = appendResult(req.ID, body); err != nil {
			log.Error("encoding the answer failed", "error", err)
			return answer{log: log, slot: slot}
		}
	}
	size := len(msg)
	if pooled != nil {
		size -= frameRoom
	}
	log.Debug("request answered", "bytes", size, "encodeMs", millis(time.Since(encoding)))
	return answer{msg: msg, pooled: pooled, log: log, slot: slot}
}

// send writes an answer and gives its buffer and encoding slot back.
func (h *handler) send(a answer) {
	var err error
	switch {
	case a.msg == nil:
	case a.pooled != nil:
		err = h.stream.writeFramed(a.msg)
	default:
		err = h.stream.writeFrame(a.msg)
	}
	a.release()
	if err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		a.log.Warn("sending the answer failed", "error", err)
	}
}

// notify sends a notification, encoding params once (see appendResult).
func (h *handler) notify(method string, params any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return err
	}
	name, _ := json.Marshal(method)
	msg := make([]byte, 0, len(body)+len(name)+40)
	msg = append(msg, `{"jsonrpc":"2.0","method":`...)
	msg = append(msg, name...)
	msg = append(msg, `,"params":`...)
	msg = append(msg, body...)
	msg = append(msg, '}')
	h.s.log.Debug("notifying", "method", method, "bytes", len(body))
	h.order.Lock()
	defer h.order.Unlock()
	// Counted before it is written: an answer begun from here on is
	// newer than this notification, and need not be made again for it.
	h.noted.Add(1)
	return h.stream.writeFrame(msg)
}

// errorResponse is an error answer, members in jsonrpc2.Response's order.
type errorResponse struct {
	ID      any    `json:"id"`
	Error   *Error `json:"error"`
	JSONRPC string `json:"jsonrpc"`
}

// appendResult frames a result answer around body without decoding it again:
// jsonrpc2.Conn.SendResponse would re-encode (and so re-scan) the result
// twice more, which for a listSessions answer over thousands of sessions
// costs more than building it.
func appendResult(id jsonrpc2.ID, body []byte) ([]byte, error) {
	return appendResultWith(id, make([]byte, 0, len(body)+60), func(dst []byte) ([]byte, error) {
		return append(dst, body...), nil
	})
}

// appendResultWith appends a result answer to msg, the result's JSON
// written by appendBody.
func appendResultWith(id jsonrpc2.ID, msg []byte, appendBody func([]byte) ([]byte, error)) ([]byte, error) {
	idJSON, err := id.MarshalJSON()
	if err != nil {
		return nil, err
	}
	msg = append(msg, `{"id":`...)
	msg = append(msg, idJSON...)
	msg = append(msg, `,"result":`...)
	if msg, err = appendBody(msg); err != nil {
		return nil, err
	}
	msg = append(msg, `,"jsonrpc":"2.0"}`...)
	return msg, nil
}

// msgBufs holds answer buffers for results that encode themselves; one
// larger than maxPooledMsg is left to the collector.
var msgBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledMsg = 16 << 20

// call runs one method, turning a panic into -32603 so the server keeps going.
func (h *handler) call(ctx context.Context, req *jsonrpc2.Request, m *Method) (result any, err error) {
	if m == nil {
		return nil, methodNotFound(req.Method)
	}
	defer func() {
		if r := recover(); r != nil {
			h.s.log.Error("panic in handler", "method", req.Method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, newError(CodeInternalError, fmt.Sprintf("internal error: %s panicked: %v", req.Method, r), nil)
		}
	}()
	return m.call(ctx, h.s, req.Params)
}

// wireErr turns any error into the JSON-RPC error to answer with.
func wireErr(ctx context.Context, err error) *Error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ctx.Err())) {
		return newError(CodeRequestCancelled, "request cancelled", nil)
	}
	if we := toWireError(err); we != nil {
		return we.(*Error)
	}
	return newError(CodeInternalError, "internal error: "+err.Error(), nil)
}

func lookup(name string) *Method {
	for i := range Methods {
		if Methods[i].Name == name {
			return &Methods[i]
		}
	}
	return nil
}

func methodNotFound(name string) *Error {
	names := make([]string, len(Methods))
	for i, m := range Methods {
		names[i] = m.Name
	}
	best := editdist.Closest(name, names, 4)
	sort.Strings(names)
	msg := fmt.Sprintf("method %q not found", clipString(name, maxEcho))
	if best != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	} else {
		msg += " (methods: " + strings.Join(names, ", ") + ")"
	}
	return newError(CodeMethodNotFound, msg, nil)
}

// ordered marks m as a method whose answer a client may rebuild its view
// of the sessions from.
func ordered(m Method) Method {
	m.ordered = true
	return m
}

// acts marks m as a method that changes the state dir.
func acts(m Method) Method {
	m.acts = true
	return m
}

// method builds a table entry: it decodes the params strictly into a P and
// calls f.
func method[P, R any](name, summary string, errs []ErrorCode, f func(*Server, context.Context, *P) (*R, error)) Method {
	return Method{
		Name:    name,
		Summary: summary,
		Params:  reflect.TypeFor[P](),
		Result:  reflect.TypeFor[R](),
		Errors:  errs,
		call: func(ctx context.Context, s *Server, raw *json.RawMessage) (any, error) {
			p := new(P)
			if err := decodeParams(raw, p); err != nil {
				return nil, err
			}
			return f(s, ctx, p)
		},
	}
}

// millis gives d in milliseconds to the microsecond, as the log shows it.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// slogPrintf lets jsonrpc2 log through slog.
type slogPrintf struct{ log *slog.Logger }

func (l slogPrintf) Printf(format string, args ...any) {
	l.log.Warn(strings.TrimSpace(fmt.Sprintf(format, args...)))
}

// The methods.

// resolveIDs resolves each id the client sent in field (ids or unique
// prefixes) to a session id, dropping repeats; see Engine.ResolveID.
func (s *Server) resolveIDs(field string, ids []string) ([]string, error) {
	out, i, err := s.engine.ResolveIDs(ids)
	if err != nil {
		return nil, idError(fmt.Sprintf("%s[%d]", field, i), err)
	}
	return out, nil
}

// resolveID resolves the id or unique prefix the client sent in field.
func (s *Server) resolveID(field, id string) (string, error) {
	full, err := s.engine.ResolveID(id)
	if err != nil {
		return "", idError(field, err)
	}
	return full, nil
}

// idError answers an id that names no one session: -32602 naming field for
// an invalid id or an ambiguous prefix (with the sessions it matches in
// data), the engine's own error (-32001, -32002) otherwise.
func idError(field string, err error) error {
	var ae *sessionlocks.AmbiguousIDError
	var ide *sessionlocks.IDError
	switch {
	case errors.As(err, &ae):
		e := paramsError(field, "%s", ae.Error())
		e.SetError(ErrorData{Field: field, Candidates: ae.Candidates, Matches: ae.Count})
		return e
	case errors.As(err, &ide):
		return paramsError(field, "%s", ide.Error())
	}
	return err
}

func (s *Server) listSessions(ctx context.Context, p *ListSessionsParams) (*ListSessionsResult, error) {
	if p.Limit != nil && *p.Limit < 0 {
		return nil, paramsError("limit", "must not be negative, got %d", *p.Limit)
	}
	if p.Offset < 0 {
		return nil, paramsError("offset", "must not be negative, got %d", p.Offset)
	}
	ids, err := s.resolveIDs("ids", p.IDs)
	if err != nil {
		return nil, err
	}
	if err := s.awaitBaseline(ctx); err != nil {
		return nil, err
	}
	var sessions []sessionlocks.Session
	if len(ids) > 0 {
		sessions, err = s.engine.Sessions(ctx, ids)
		sort.SliceStable(sessions, func(i, j int) bool { return sessions[i].UpdatedAt.After(sessions[j].UpdatedAt) })
	} else {
		sessions, err = s.engine.ListShared(ctx) // read only, here and in appendList
	}
	if err != nil {
		return nil, err
	}
	listed := len(sessions) // before filtering: the answer covers the whole state dir only if none is dropped
	if p.IncludeFree != nil && !*p.IncludeFree {
		var kept []sessionlocks.Session
		for _, ss := range sessions {
			if ss.State != sessionlocks.StateFree {
				kept = append(kept, ss)
			}
		}
		sessions = kept
	}
	total := len(sessions)
	whole := len(ids) == 0 && total == listed && p.Offset == 0 && (p.Limit == nil || *p.Limit >= total)
	sessions = sessions[min(p.Offset, total):]
	if p.Limit != nil && *p.Limit < len(sessions) {
		sessions = sessions[:*p.Limit]
	}
	stateDir := s.engine.StateDir()
	return &ListSessionsResult{appendJSON: func(dst []byte) ([]byte, error) {
		return s.sessions.appendList(dst, stateDir, total, sessions, whole, p.Since)
	}}, nil
}

func (s *Server) canResume(ctx context.Context, p *CanResumeParams) (*CanResumeResult, error) {
	id, err := s.resolveID("sessionId", p.SessionID)
	if err != nil {
		return nil, err
	}
	ss, err := s.engine.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	// A refusal the user asks about later is found in the log.
	logVerdicts(s.log, "canResume", ss)
	return wireCanResume(ss, time.Now()), nil
}

func (s *Server) reclaimStale(ctx context.Context, p *ReclaimStaleParams) (*ReclaimStaleResult, error) {
	ids, err := s.resolveIDs("sessionIds", p.SessionIDs)
	if err != nil {
		return nil, err
	}
	if !p.DryRun {
		if err := s.awaitWatched(ctx); err != nil {
			return nil, err
		}
	}
	// Absent selects every session; an empty list (an IDE whose selection
	// filtered down to nothing) selects none.
	r, err := s.engine.Reclaim(ctx, sessionlocks.ReclaimOptions{IDs: ids, All: p.SessionIDs == nil, DryRun: p.DryRun})
	if err != nil {
		return nil, err
	}
	for _, f := range r.Failed {
		s.log.Warn("could not reclaim a stale lock", "session", f.Holder.SessionID, "lock", f.Holder.LockFile, "error", f.Err)
	}
	if n := len(r.Reclaimed); n > 0 && !p.DryRun {
		s.log.Info("reclaimed stale locks", "count", n)
	}
	return wireReclaim(r), nil
}

var pid = os.Getpid()

// maxGrace bounds forceResume's graceMs: a caller asking for longer than
// ten minutes has made a mistake, and the request would hold the session.
const maxGrace = 10 * time.Minute

func (s *Server) forceResume(ctx context.Context, p *ForceResumeParams) (*ForceResumeResult, error) {
	if err := sessionlocks.ValidateID(p.SessionID); err != nil {
		return nil, idError("sessionId", err)
	}
	grace := 3 * time.Second
	if p.GraceMs != nil {
		// Compared as milliseconds: converted first, a huge value would
		// overflow a Duration and pass.
		if *p.GraceMs < 0 || int64(*p.GraceMs) > maxGrace.Milliseconds() {
			return nil, paramsError("graceMs", "must be between 0 and %d (ten minutes), got %d", maxGrace.Milliseconds(), *p.GraceMs)
		}
		grace = time.Duration(*p.GraceMs) * time.Millisecond
	}
	if p.Kill && !p.Terminate {
		return nil, paramsError("kill", "only with terminate: SIGKILL follows a SIGTERM that did not stop the process")
	}
	if p.Expect != "" && !sessionlocks.ValidToken(p.Expect) {
		return nil, paramsError("expect", "not a token from canResume (pass its answer's token as it is), got %q", clipString(p.Expect, 40))
	}
	// A prefix is resolved once, here: everything below acts on that one
	// session, and an expect token names holders of that session only.
	id, err := s.resolveID("sessionId", p.SessionID)
	if err != nil {
		return nil, err
	}
	if err := s.awaitWatched(ctx); err != nil {
		return nil, err
	}
	r, err := s.engine.Force(ctx, id, sessionlocks.ForceOptions{Terminate: p.Terminate, Kill: p.Kill, Grace: grace, Expect: p.Expect})
	if err != nil {
		return nil, err
	}
	s.log.Info("forced resume", "session", id, "removed", len(r.Removed), "kept", len(r.Kept),
		"signalled", r.Signalled, "exited", r.Exited, "stillRunning", r.StillRunning, "notSignalled", len(r.NotSignalled))
	return wireForce(id, r), nil
}

func (s *Server) status(ctx context.Context, _ *StatusParams) (*StatusResult, error) {
	cs := s.engine.CacheStats()
	st := &StatusResult{
		Version:        version.Version,
		GoVersion:      runtime.Version(),
		PID:            pid,
		StateDir:       s.engine.StateDir(),
		StateDirExists: s.engine.StateDirExists(),
		Watching:       s.watching.Load(),
		UptimeMs:       time.Since(s.started).Milliseconds(),
		SettleMs:       s.engine.Settle().Milliseconds(),
		Cache: CacheStatus{
			TTLMs:   cs.TTL.Milliseconds(),
			Entries: cs.Entries,
			Hits:    cs.Hits,
			Misses:  cs.Misses,
		},
		Platform: platformOf(s.engine.Vantage()),
	}
	if f := s.opts.LogDropped; f != nil {
		st.LogDropped = f()
	}
	if w := s.opts.Watcher; w != nil && st.Watching {
		st.Watch = wireWatch(w.Stats())
	}
	return st, nil
}

// platformOf is the status's Platform, from where the engine judges.
func platformOf(v sessionlocks.Vantage) Platform {
	return Platform{OS: runtime.GOOS, Arch: runtime.GOARCH, FileSystem: v.FileSystem, SharedFileSystem: v.Shared, NestedPIDNamespace: v.NestedPIDNamespace}
}

// maxEcho bounds what an error message repeats of a name the client sent:
// enough to recognise it, not an 8 MB echo.
const maxEcho = 64

// clipString shortens s for an error message.
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
