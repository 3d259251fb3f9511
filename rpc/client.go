package rpc

// The client: calls and notifications over a Stream, for `sessionlocks call`,
// the REPL and tests.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// Framing is how the client frames what it sends; 0 (FramingAuto) means
	// FramingHeader, which is what the IDE uses. The server answers in kind.
	Framing Framing
	// MaxMessageSize limits one incoming message; 0 means 1 GiB (a
	// listSessions answer over many thousands of sessions is large).
	MaxMessageSize int64
	// OnNotification, if set, is called with every notification the server
	// sends (sessionsChanged), one at a time, in order. It runs on the read
	// loop, so answers wait while it does: hand slow work to a goroutine.
	OnNotification func(method string, params json.RawMessage)
	// Trace, if set, sees every message body read (in) or written.
	Trace func(in bool, body []byte)
	// WrapPipes, if set, lets DialCommand's caller interpose on the child's
	// stdout and stdin (the REPL's .trace shows the raw frames this way).
	WrapPipes func(stdout io.ReadCloser, stdin io.WriteCloser) (io.ReadCloser, io.WriteCloser)
	// Logger receives warnings about unexpected input; nil means slog.Default().
	Logger *slog.Logger
	// OnLateAnswer, if set, receives the answer to a call whose ctx ended
	// before it came (Call had returned ctx.Err()): -32800 when the request
	// had done nothing, its result when it had already begun to act (a
	// forceResume or reclaimStale then finishes and says what it did).
	// Without it such an answer is logged, never dropped unseen. It runs on
	// the read loop.
	OnLateAnswer func(method string, result json.RawMessage, err *Error)
}

// A Client speaks JSON-RPC to a sessionlocks server with the same codec the
// server uses. `sessionlocks call`, the REPL and the tests share it.
//
// It is small on purpose rather than a jsonrpc2.Conn: a client only matches
// answers to calls and hands notifications on, and decoding each answer once
// (jsonrpc2 decodes a message three times, once into interface{} values)
// matters for a listSessions answer over thousands of sessions.
type Client struct {
	stream *Stream
	log    *slog.Logger
	onNote func(method string, params json.RawMessage)
	onLate func(method string, result json.RawMessage, err *Error)
	nextID atomic.Uint64

	mu      sync.Mutex
	pending map[uint64]chan *message
	late    map[uint64]string // calls given up on (ctx ended), by id: their method
	closed  bool
	done    chan struct{}
}

// message is any incoming message; Stream.check has validated its shape.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// NewClient returns a client over rwc (for example a child's stdout and
// stdin; see DialCommand). Closing the client closes rwc.
func NewClient(rwc io.ReadWriteCloser, opts ClientOptions) *Client {
	if opts.Framing == FramingAuto {
		opts.Framing = FramingHeader
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = 1 << 30
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Client{
		stream: NewStream(rwc, StreamOptions{
			Framing:        opts.Framing,
			MaxMessageSize: opts.MaxMessageSize,
			Client:         true,
			Logger:         log,
			Trace:          opts.Trace,
		}),
		log:     log,
		onNote:  opts.OnNotification,
		onLate:  opts.OnLateAnswer,
		pending: map[uint64]chan *message{},
		late:    map[uint64]string{},
		done:    make(chan struct{}),
	}
	go c.read()
	return c
}

func (c *Client) read() {
	for {
		m := new(message)
		if err := c.stream.ReadObject(m); err != nil {
			if !errors.Is(err, io.EOF) && !c.isClosed() {
				c.log.Warn("connection to the server failed", "error", err)
			}
			c.shutdown()
			return
		}
		switch {
		case m.Method != "" && m.ID == nil:
			if c.onNote != nil {
				c.onNote(m.Method, m.Params)
			}
		case m.Method != "":
			// The server never calls the client; say so rather than leave it waiting.
			msg, _ := json.Marshal(errorResponse{ID: m.ID, Error: &Error{Code: CodeMethodNotFound, Message: "the client has no methods"}, JSONRPC: "2.0"})
			c.stream.writeFrame(msg)
		default:
			var id uint64
			json.Unmarshal(m.ID, &id)
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			method, late := c.late[id]
			delete(c.late, id)
			c.mu.Unlock()
			switch {
			case late:
				c.lateAnswer(method, m)
			case ch == nil:
				c.log.Warn("ignoring an answer to no pending call", "id", string(m.ID))
			default:
				ch <- m
			}
		}
	}
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// shutdown closes the stream once and fails every pending call.
func (c *Client) shutdown() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	close(c.done)
	c.mu.Unlock()
	return c.stream.Close()
}

// request is an outgoing request or notification.
type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// ErrClosed is returned by calls on a closed connection.
var ErrClosed = jsonrpc2.ErrClosed

// Call sends a request and waits for its answer, which it decodes into
// result (a pointer, or nil to discard it; *json.RawMessage keeps it raw).
// params may be nil (no params member), a struct, a map or a json.RawMessage.
// An error answer is returned as *Error; a closed connection as ErrClosed.
// When ctx ends first, Call sends $/cancelRequest for the request and
// returns ctx.Err(); the server's answer, when it comes, goes to
// ClientOptions.OnLateAnswer.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	id := c.nextID.Add(1) // from 1: the omitempty id above is never dropped
	ch := make(chan *message, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(request{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		c.forget(id)
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return ErrClosed
		}
		if m.Error != nil {
			return m.Error
		}
		if result == nil {
			return nil
		}
		if m.Result == nil {
			m.Result = json.RawMessage("null")
		}
		return json.Unmarshal(m.Result, result)
	case <-ctx.Done():
		// The server is told, and its answer still comes: to OnLateAnswer.
		c.mu.Lock()
		if _, ok := c.pending[id]; ok {
			delete(c.pending, id)
			c.late[id] = method
		}
		c.mu.Unlock()
		c.Notify(context.Background(), NotifyCancelRequest, map[string]uint64{"id": id})
		return ctx.Err()
	}
}

// lateAnswer hands the answer to a call given up on to OnLateAnswer.
func (c *Client) lateAnswer(method string, m *message) {
	if c.onLate != nil {
		c.onLate(method, m.Result, m.Error)
		return
	}
	if m.Error != nil {
		c.log.Info("late answer to a cancelled call", "method", method, "code", m.Error.Code, "message", m.Error.Message)
		return
	}
	c.log.Warn("late answer to a cancelled call: it had already acted", "method", method, "result", string(m.Result))
}

func (c *Client) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *Client) send(r request) error {
	msg, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return c.stream.writeFrame(msg)
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if c.isClosed() {
		return ErrClosed
	}
	return c.send(request{JSONRPC: "2.0", Method: method, Params: params})
}

// Done is closed when the connection is closed, by either side.
func (c *Client) Done() <-chan struct{} { return c.done }

// Framing returns the framing the client sends.
func (c *Client) Framing() Framing { return c.stream.Framing() }

// Close closes the connection; calls in flight fail with ErrClosed. For a
// child started with DialCommand this closes its stdin, which makes `serve`
// exit.
func (c *Client) Close() error { return c.shutdown() }

// DialCommand starts cmd (a `sessionlocks serve` command whose Stdin and
// Stdout must be unset) and returns a client speaking to it over its stdin
// and stdout. The caller waits for cmd after closing the client.
func DialCommand(cmd *exec.Cmd, opts ClientOptions) (*Client, error) {
	if cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, errors.New("rpc.DialCommand: cmd.Stdin and cmd.Stdout must be unset")
	}
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
	var r io.ReadCloser = stdout
	var w io.WriteCloser = stdin
	if opts.WrapPipes != nil {
		r, w = opts.WrapPipes(stdout, stdin)
	}
	return NewClient(ReadWriteCloser(r, w), opts), nil
}

// ReadWriteCloser joins a reader and a writer into one stream; Close closes
// the writer first (so the peer sees end of input), then the reader.
func ReadWriteCloser(r io.ReadCloser, w io.WriteCloser) io.ReadWriteCloser {
	return &rwc{r, w}
}

type rwc struct {
	r io.ReadCloser
	w io.WriteCloser
}

func (p *rwc) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *rwc) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *rwc) Close() error {
	werr := p.w.Close()
	rerr := p.r.Close()
	if werr != nil {
		return werr
	}
	return rerr
}

// Pipe returns the two ends of an in-memory connection, for running a
// Server and a Client in one process (`sessionlocks call`, tests). Closing
// one end makes the other's reads end with io.EOF.
func Pipe() (a, b io.ReadWriteCloser) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	return &rwc{ar, aw}, &rwc{br, bw}
}
