package rpc

// Dispatch: which request runs when, and its answer sent through the
// jsonrpc2.Conn. Handle runs on jsonrpc2's read loop and never waits for a
// request, so that stdin EOF, $/cancelRequest and status are acted on however
// many requests wait (behind another process's operation lock, or on a client
// that stopped reading). Requests beyond maxRunning are queued as messages,
// not goroutines; only a client past maxQueuedBytes of them is made to wait.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

const (
	// maxRunning bounds the requests running at once, and apart from them
	// the quick ones (see inflight.quick); the rest wait in the queue.
	maxRunning = 256
	// maxQueuedBytes bounds the queue, each request counted as its params'
	// bytes plus queuedOverhead; past it the read loop waits (the only
	// backpressure on input).
	maxQueuedBytes = 64 << 20
	queuedOverhead = 512
	// maxAnswers bounds the answers computed but not yet written.
	maxAnswers = 4
)

// handler dispatches the requests of one connection.
type handler struct {
	s  *Server
	wg sync.WaitGroup

	mu      sync.Mutex
	running map[jsonrpc2.ID]*inflight // requests started or queued, by id
	queue   []*inflight               // requests waiting to start, in order
	queued  int                       // their size (see maxQueuedBytes)
	active  map[bool]int              // requests running, quick (true) and the others apart
	room    *sync.Cond                // signalled when the queue shrinks

	// answers holds a place for each answer computed and not yet written,
	// so that a client that stops reading holds at most maxAnswers of them
	// (a listing of 3,000 sessions is over a megabyte) and the requests
	// behind them wait uncomputed.
	answers chan struct{}

	// order keeps a listSessions answer from being sent after a
	// sessionsChanged that went out while it was being made (a client
	// rebuilding its view from the answer would undo the change): listings
	// hold it for reading while made and sent, a notification for writing
	// while sent. Simpler than making an answer again when a notification
	// overtook it, and an answer waits at most for one notification's write.
	order sync.RWMutex

	warn rateLimit // warnings about bad input, which a peer can send in a loop
}

// inflight is one request, running or queued.
type inflight struct {
	conn   *jsonrpc2.Conn
	req    *jsonrpc2.Request
	m      *Method
	ctx    context.Context
	cancel context.CancelFunc
	size   int  // what it counts in the queue
	queued bool // still in the queue
	// quick requests answer from memory at once (status, rpc.discover, an
	// unknown method, $/cancelRequest sent with an id): they run beside
	// maxRunning others, so that a client can always ask how the server is,
	// and take no place among the answers (they are small).
	quick bool
}

// cancelMethod answers $/cancelRequest sent as a request (by mistake) with
// null, so that its sender does not wait forever.
var cancelMethod = Method{Name: NotifyCancelRequest, call: func(context.Context, *Server, *json.RawMessage) (any, error) { return nil, nil }}

func (h *handler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	m := lookup(req.Method)
	if req.Method == NotifyCancelRequest {
		h.cancelRequest(req)
		if req.Notif {
			return
		}
		m = &cancelMethod
	}
	if req.Notif {
		// A request without an id cannot be answered or cancelled: it does
		// nothing (a forceResume nobody can stop or hear must not act).
		h.warn.warn(h.s.log, "notification", "ignoring a notification: send a request with an id", "method", clipString(req.Method, maxEcho))
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	f := &inflight{conn: conn, req: req, m: m, ctx: rctx, cancel: cancel, quick: m == nil || m.quick, size: queuedOverhead}
	if req.Params != nil {
		f.size += len(*req.Params)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running[req.ID] = f
	// A quick request passes the queue; the others keep their order.
	if (f.quick || len(h.queue) == 0) && h.active[f.quick] < maxRunning {
		h.start(f)
		return
	}
	for h.queued+f.size > maxQueuedBytes && len(h.queue) > 0 && ctx.Err() == nil {
		h.room.Wait()
	}
	f.queued = true
	h.queue = append(h.queue, f)
	h.queued += f.size
}

// start runs f on a goroutine of its own (in order, with
// Options.sequential); h.mu is held.
func (h *handler) start(f *inflight) {
	h.active[f.quick]++
	h.wg.Add(1)
	run := func() {
		defer h.wg.Done()
		defer h.finish(f)
		h.serve(f)
	}
	if h.s.opts.sequential {
		h.mu.Unlock()
		run()
		h.mu.Lock()
	} else {
		go run()
	}
}

// finish forgets f and starts the queued requests there is room for.
func (h *handler) finish(f *inflight) {
	f.cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running[f.req.ID] == f {
		delete(h.running, f.req.ID)
	}
	h.active[f.quick]--
	for len(h.queue) > 0 && h.active[h.queue[0].quick] < maxRunning {
		g := h.queue[0]
		h.queue[0] = nil
		h.queue = h.queue[1:]
		h.unqueue(g)
		h.start(g)
	}
}

// unqueue counts f out of the queue; h.mu is held.
func (h *handler) unqueue(f *inflight) {
	h.queued -= f.size
	f.queued = false
	h.room.Broadcast()
}

func (h *handler) cancelRequest(req *jsonrpc2.Request) {
	var p struct {
		ID jsonrpc2.ID `json:"id"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		h.warn.warn(h.s.log, "malformed $/cancelRequest", "ignoring malformed $/cancelRequest", "error", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.running[p.ID]
	if f == nil {
		return
	}
	h.s.log.Debug("cancelling request", "id", p.ID.String())
	f.cancel()
	if f.queued && h.active[true] < maxRunning {
		// Never started: it starts now, beside the others, only to answer
		// "cancelled" (see serve). With no room among the quick ones (a
		// client that does not read their answers), it keeps its place in
		// the queue and answers then.
		h.queue = slices.DeleteFunc(h.queue, func(g *inflight) bool { return g == f })
		h.unqueue(f)
		f.quick = true
		h.start(f)
	}
}

// cancelAll cancels every request; the queued ones never start.
func (h *handler) cancelAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.queue {
		f.queued = false
		delete(h.running, f.req.ID)
		f.cancel()
	}
	h.queue, h.queued = nil, 0
	for _, f := range h.running {
		f.cancel()
	}
	h.room.Broadcast()
}

// drain waits up to d for running requests to finish, then cancels the rest
// and gives them a moment to answer "cancelled".
func (h *handler) drain(d time.Duration) {
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	h.mu.Lock()
	waiting := len(h.queue)
	h.mu.Unlock()
	if waiting == 0 {
		select {
		case <-done:
			return
		case <-time.After(d):
		}
	}
	h.s.log.Warn("input closed with requests still running; cancelling them")
	h.cancelAll()
	select {
	case <-done:
	case <-time.After(100 * time.Millisecond):
	}
}

// serve runs one request and sends its answer (Handle drops notifications).
func (h *handler) serve(f *inflight) {
	ctx, req := f.ctx, f.req
	log := h.s.log.With("method", req.Method, "id", req.ID.String())
	if !f.quick {
		// A place among the answers before the answer is made (see
		// handler.answers); waiting for it, the request has done nothing.
		select {
		case h.answers <- struct{}{}:
			defer func() { <-h.answers }()
		case <-ctx.Done():
		}
	}
	if f.m != nil && f.m.ordered {
		h.order.RLock()
		defer h.order.RUnlock()
	}
	start := time.Now()
	var result any
	err := ctx.Err() // cancelled before it began: it does nothing
	if err == nil {
		result, err = h.call(ctx, req, f.m)
	}
	if hook := h.s.opts.testHookAnswered; hook != nil && err == nil {
		hook(req.Method)
	}
	replying := time.Now()
	log = log.With("ms", millis(replying.Sub(start)))
	if err != nil {
		e := wireErr(ctx, err)
		if e.Code == CodeInternalError {
			log.Error("request failed", "error", err)
		} else {
			log.Debug("request answered with an error", "code", e.Code, "message", e.Message)
		}
		err = f.conn.ReplyWithError(ctx, req.ID, e)
	} else {
		err = f.conn.Reply(ctx, req.ID, result)
		log.Debug("request answered", "replyMs", millis(time.Since(replying)))
	}
	if err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		log.Warn("sending the answer failed", "error", err)
	}
}

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

// millis gives d in milliseconds to the microsecond, as the log shows it.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
