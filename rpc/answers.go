package rpc

// Answers: each request's answer made, encoded and written, and the
// notifications. An ordered answer (listSessions) is never written after a
// sessionsChanged newer than it, and answers are framed by hand around their
// encoded result instead of being encoded again by jsonrpc2.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// serve runs a request and writes its answer, if it has an id.
func (h *handler) serve(ctx context.Context, req *jsonrpc2.Request, m *Method) {
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

// millis gives d in milliseconds to the microsecond, as the log shows it.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cancelledAnswer is -32800 for a request that never ran.
func (h *handler) cancelledAnswer(req *jsonrpc2.Request) answer {
	msg, err := json.Marshal(errorResponse{ID: req.ID, Error: newError(CodeRequestCancelled, "request cancelled", nil), JSONRPC: "2.0"})
	if err != nil {
		return answer{log: h.s.log}
	}
	return answer{msg: msg, log: h.s.log}
}
