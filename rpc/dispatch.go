package rpc

// Dispatch: which request runs when. Handle runs on jsonrpc2's read loop and
// never waits for a request to finish, so that however many requests wait
// (reclaims behind an operation lock another process holds, listings for a
// client that stopped reading), stdin EOF, $/cancelRequest and status are
// still read and acted on. Requests beyond maxRunning wait in a queue that
// holds their message only, no goroutine; only a client that has sent more
// than maxQueuedBytes of requests nobody has started is made to wait.

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// handler dispatches requests and writes their answers.
type handler struct {
	s      *Server
	stream *Stream
	wg     sync.WaitGroup

	mu      sync.Mutex
	running map[jsonrpc2.ID]*inflight // requests started or queued, by id
	queue   []*inflight               // requests waiting for a slot, in order
	queued  int                       // bytes of their params
	active  int                       // requests running
	room    *sync.Cond                // signalled when queued bytes go down

	// order is held while a notification is written, and while an ordered
	// answer (listSessions) checks that none was written since it was
	// begun and is written; noted counts notifications written.
	order sync.Mutex
	noted atomic.Uint64

	// encoding bounds the answers encoded and not yet written: a client
	// that stops reading holds up to maxUnwritten of them, and the requests
	// after them wait before they encode (an answer over 3,000 sessions is
	// over a megabyte; a listing not yet encoded is shared).
	encoding chan struct{}

	warn rateLimit // warnings about bad input, which a peer can send in a loop
}

// maxRunning bounds the requests running at once; the rest wait in the
// queue. The IDE sends a handful.
const maxRunning = 256

// maxQueuedBytes bounds the params of requests waiting in the queue; past
// it the read loop waits (the only backpressure on input).
const maxQueuedBytes = 64 << 20

// maxUnwritten bounds the answers encoded but not yet written.
const maxUnwritten = 4

// inflight is one request, running or queued.
type inflight struct {
	req    *jsonrpc2.Request
	m      *Method
	ctx    context.Context
	cancel context.CancelFunc
	size   int  // its params' bytes while queued
	queued bool // still in the queue
}

func newHandler(s *Server) *handler {
	h := &handler{
		s:        s,
		running:  map[jsonrpc2.ID]*inflight{},
		encoding: make(chan struct{}, maxUnwritten),
	}
	h.room = sync.NewCond(&h.mu)
	return h
}

// immediate methods answer from memory at once: they run whatever else is
// queued, so that a client can always ask the server how it is.
func immediate(m *Method) bool {
	return m != nil && (m.Name == MethodStatus || m.Name == MethodDiscover)
}

func (h *handler) Handle(ctx context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Method == NotifyCancelRequest {
		h.cancelRequest(req)
		if !req.Notif {
			// Sent as a request by mistake: answer, or the client waits forever.
			msg, _ := appendResult(req.ID, []byte("null"))
			h.stream.writeFrame(msg)
		}
		return
	}
	m := lookup(req.Method)
	if req.Notif && m == nil {
		h.s.log.Debug("ignoring unknown notification", "method", req.Method)
		return
	}
	// A known method sent without an id still runs; its answer is dropped.
	rctx, cancel := context.WithCancel(ctx)
	f := &inflight{req: req, m: m, ctx: rctx, cancel: cancel}
	if req.Params != nil {
		f.size = len(*req.Params)
	}
	h.mu.Lock()
	if !req.Notif {
		h.running[req.ID] = f
	}
	if h.active < maxRunning || immediate(m) || m == nil {
		h.start(f)
		h.mu.Unlock()
		return
	}
	for h.queued+f.size > maxQueuedBytes && h.queued > 0 && ctx.Err() == nil {
		h.room.Wait()
	}
	f.queued = true
	h.queue = append(h.queue, f)
	h.queued += f.size
	h.mu.Unlock()
}

// start runs f on a goroutine of its own; h.mu is held.
func (h *handler) start(f *inflight) {
	h.active++
	h.wg.Add(1)
	run := func() {
		defer h.wg.Done()
		defer h.finish(f)
		h.serve(f.ctx, f.req, f.m)
	}
	if h.s.opts.sequential {
		h.mu.Unlock()
		run()
		h.mu.Lock()
	} else {
		go run()
	}
}

// finish forgets f and starts the next queued request.
func (h *handler) finish(f *inflight) {
	f.cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	if g := h.running[f.req.ID]; g == f {
		delete(h.running, f.req.ID)
	}
	h.active--
	h.startQueued()
}

// startQueued starts queued requests while there is room; h.mu is held.
func (h *handler) startQueued() {
	for h.active < maxRunning && len(h.queue) > 0 {
		f := h.queue[0]
		h.queue[0] = nil
		h.queue = h.queue[1:]
		h.queued -= f.size
		f.queued = false
		h.room.Broadcast()
		h.start(f)
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

func (h *handler) cancelRequest(req *jsonrpc2.Request) {
	var p CancelParams
	if err := decodeParams(req.Params, &p); err != nil {
		h.warn.warn(h.s.log, "malformed $/cancelRequest", "ignoring malformed $/cancelRequest", "error", err)
		return
	}
	var id jsonrpc2.ID
	if err := json.Unmarshal(p.ID, &id); err != nil {
		h.warn.warn(h.s.log, "bad $/cancelRequest id", "ignoring $/cancelRequest with a bad id", "id", short(p.ID))
		return
	}
	h.mu.Lock()
	f := h.running[id]
	if f != nil && f.queued {
		// Never started: answered as cancelled here, nothing was done.
		h.dequeue(f)
		delete(h.running, id)
		h.mu.Unlock()
		f.cancel()
		h.send(h.cancelledAnswer(f.req))
		return
	}
	h.mu.Unlock()
	if f != nil {
		h.s.log.Debug("cancelling request", "id", id.String())
		f.cancel()
	}
}

// dequeue takes f out of the queue; h.mu is held.
func (h *handler) dequeue(f *inflight) {
	for i, g := range h.queue {
		if g == f {
			h.queue = append(h.queue[:i], h.queue[i+1:]...)
			h.queued -= f.size
			f.queued = false
			h.room.Broadcast()
			return
		}
	}
}

// cancelAll cancels every request; the queued ones never start.
func (h *handler) cancelAll() {
	h.mu.Lock()
	queued := h.queue
	h.queue, h.queued = nil, 0
	for _, f := range queued {
		f.queued = false
		delete(h.running, f.req.ID)
	}
	for _, f := range h.running {
		f.cancel()
	}
	h.room.Broadcast()
	h.mu.Unlock()
	for _, f := range queued {
		f.cancel()
	}
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

// rateLimit lets one warning of each kind through per second; those held
// back are counted in one line when the second is over. A peer that sends
// the same bad message in a loop must not fill the log.
type rateLimit struct {
	mu   sync.Mutex
	last map[string]time.Time
	held map[string]int
}

type warner interface{ Warn(string, ...any) }

func (r *rateLimit) warn(log warner, kind, msg string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last, r.held = map[string]time.Time{}, map[string]int{}
	}
	now := time.Now()
	if since := now.Sub(r.last[kind]); since < time.Second {
		if r.held[kind]++; r.held[kind] == 1 {
			time.AfterFunc(time.Second-since, func() { r.flush(log, kind, msg) })
		}
		return
	}
	r.last[kind] = now
	log.Warn(msg, args...)
}

// flush logs how many warnings of kind were held back.
func (r *rateLimit) flush(log warner, kind, msg string) {
	r.mu.Lock()
	n := r.held[kind]
	r.held[kind] = 0
	r.last[kind] = time.Now()
	r.mu.Unlock()
	if n > 0 {
		log.Warn(msg+" (more alike, held back)", "alikeSuppressed", n)
	}
}
