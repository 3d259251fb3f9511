package rpc

// The client: a jsonrpc2.Conn over the server's own codec (Stream), for
// `sessionlocks call`, the REPL and tests.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// Framing is how the client frames what it sends; 0 (FramingAuto) means
	// FramingHeader, which is what the IDE uses. The server answers in kind.
	Framing Framing
	// OnNotification, if set, is called with every notification the server
	// sends (sessionsChanged), one at a time, in order. It runs on the read
	// loop, so answers wait while it does: hand slow work to a goroutine.
	OnNotification func(method string, params json.RawMessage)
	// Trace, if set, sees every message body read (in) or written.
	Trace func(in bool, body []byte)
	// Logger receives warnings about unexpected input; nil means slog.Default().
	Logger *slog.Logger
	// OnLateAnswer, if set, receives the answer to a call whose ctx ended
	// before it came (Call had returned ctx.Err()): -32800 when the request
	// had done nothing, its result when it had already begun to act (a
	// forceResume or reclaimStale then finishes and says what it did).
	// Without it such an answer is logged, never dropped unseen.
	OnLateAnswer func(method string, result json.RawMessage, err *Error)
}

// A Client is a jsonrpc2.Conn over the server's codec (either framing, bad
// messages skipped) with ids and cancellation added to Call. Closing it
// closes the byte stream: a `serve` started with DialCommand then exits.
type Client struct {
	*jsonrpc2.Conn
	log    *slog.Logger
	onLate func(method string, result json.RawMessage, err *Error)
	nextID atomic.Uint64
}

// NewClient returns a client over rwc (for example a child's stdout and
// stdin; see DialCommand). Closing the client closes rwc.
func NewClient(rwc io.ReadWriteCloser, opts ClientOptions) *Client {
	log := cmp.Or(opts.Logger, slog.Default())
	stream := NewStream(rwc, StreamOptions{
		Framing:        cmp.Or(opts.Framing, FramingHeader),
		MaxMessageSize: 1 << 30, // a listing of many thousands of sessions is large
		Client:         true,
		Logger:         log,
		Trace:          opts.Trace,
	})
	// The server's notifications are handed on; its requests are refused.
	h := jsonrpc2.HandlerWithError(func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		if !req.Notif {
			return nil, &Error{Code: CodeMethodNotFound, Message: "the client has no methods"}
		}
		if f := opts.OnNotification; f != nil {
			var params json.RawMessage
			if req.Params != nil {
				params = *req.Params
			}
			f(req.Method, params)
		}
		return nil, nil
	})
	conn := jsonrpc2.NewConn(context.Background(), stream, h, jsonrpc2.SetLogger(connLog{stream}))
	return &Client{Conn: conn, log: log, onLate: opts.OnLateAnswer}
}

// Call sends a request and waits for its answer, which it decodes into
// result (a pointer, or nil to discard it; *json.RawMessage keeps it raw).
// params may be nil (no params member), a struct, a map or a json.RawMessage.
// An error answer is returned as *Error; a closed connection as jsonrpc2.ErrClosed.
// When ctx ends first, Call sends $/cancelRequest for the request and
// returns ctx.Err(); the server's answer, when it comes, goes to
// ClientOptions.OnLateAnswer.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	id := jsonrpc2.ID{Num: c.nextID.Add(1)}
	w, err := c.DispatchCall(ctx, method, params, jsonrpc2.PickID(id))
	if err != nil {
		return err
	}
	if err := w.Wait(ctx, result); ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return err
	}
	c.Notify(context.Background(), NotifyCancelRequest, CancelParams{ID: json.RawMessage(id.String())})
	go c.late(method, w)
	return ctx.Err()
}

// late waits for the answer to a call given up on and hands it on; the
// connection's end answers it with ErrClosed, which is not handed on.
func (c *Client) late(method string, w jsonrpc2.Waiter) {
	var result json.RawMessage
	err := w.Wait(context.Background(), &result)
	var e *Error
	switch {
	case errors.Is(err, jsonrpc2.ErrClosed):
	case c.onLate != nil:
		errors.As(err, &e)
		c.onLate(method, result, e)
	case errors.As(err, &e):
		c.log.Info("late answer to a cancelled call", "method", method, "code", e.Code, "message", e.Message)
	default:
		c.log.Warn("late answer to a cancelled call: it had already acted", "method", method, "result", string(result))
	}
}

// DialCommand starts cmd (a `sessionlocks serve` command whose Stdin and
// Stdout must be unset, or the pipes fail) and returns a client speaking to
// it over its stdin and stdout. The caller waits for cmd after closing the
// client.
func DialCommand(cmd *exec.Cmd, opts ClientOptions) (*Client, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	return NewClient(ReadWriteCloser(stdout, stdin), opts), nil
}

// ReadWriteCloser joins a reader and a writer into one stream; Close closes
// the writer first (so the peer sees end of input), then the reader.
func ReadWriteCloser(r io.ReadCloser, w io.WriteCloser) io.ReadWriteCloser {
	return struct {
		io.Reader
		io.Writer
		io.Closer
	}{r, w, closeFunc(func() error { return errors.Join(w.Close(), r.Close()) })}
}

type closeFunc func() error

func (f closeFunc) Close() error { return f() }
