package rpc

// Answers: a request run and its answer sent through the jsonrpc2.Conn, and
// the notifications, which a listing under way holds back (handler.order).

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

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

// notify sends a notification once no listing is under way.
func (h *handler) notify(conn *jsonrpc2.Conn, method string, params any) error {
	h.order.Lock()
	defer h.order.Unlock()
	h.s.log.Debug("notifying", "method", method)
	return conn.Notify(context.Background(), method, params)
}

// wireErr turns any error into the JSON-RPC error to answer with.
func wireErr(ctx context.Context, err error) *Error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ctx.Err())) {
		return newError(CodeRequestCancelled, "request cancelled", nil)
	}
	if we := toWireError(err); we != nil {
		return we
	}
	return newError(CodeInternalError, "internal error: "+err.Error(), nil)
}

// millis gives d in milliseconds to the microsecond, as the log shows it.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
