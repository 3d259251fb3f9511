package repl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// client is the REPL's end of the wire: `sessionlocks serve` as a child
// process, spoken to over its stdin and stdout with the Content-Length framing
// the IDE uses, so that what the REPL shows is what the IDE would get.
type client struct {
	cmd    *exec.Cmd
	conn   *jsonrpc2.Conn
	nextID atomic.Uint64
	exited chan struct{} // closed when the child has been reaped
	exit   error         // the child's exit status; valid after exited
	stdin  io.Closer
}

// frameSink receives every complete frame that crosses the wire, raw:
// out is true for frames the REPL sent.
type frameSink func(out bool, header, body []byte)

// notifySink receives every notification the server sends.
type notifySink func(method string, params json.RawMessage)

// startClient starts argv (the serve command) and connects to it. stderr of
// the child goes to logw.
func startClient(argv []string, logw io.Writer, frames frameSink, notify notifySink) (*client, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = logw
	Isolate(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	c := &client{cmd: cmd, exited: make(chan struct{}), stdin: stdin}
	rwc := &tappedPipe{
		r: io.TeeReader(stdout, &frameTap{emit: func(h, b []byte) { frames(false, h, b) }}),
		w: io.MultiWriter(stdin, &frameTap{emit: func(h, b []byte) { frames(true, h, b) }}),
		c: stdin,
	}
	stream := jsonrpc2.NewBufferedStream(rwc, jsonrpc2.VSCodeObjectCodec{})
	c.conn = jsonrpc2.NewConn(context.Background(), stream, notifyHandler(notify))
	go func() {
		// Wait closes the stdout pipe, so the connection sees EOF only after
		// everything the child wrote has been read.
		<-c.conn.DisconnectNotify()
		c.exit = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// tappedPipe joins the child's stdout and stdin into the ReadWriteCloser the
// codec wants, with every byte also fed to the frame taps.
type tappedPipe struct {
	r io.Reader
	w io.Writer
	c io.Closer
}

func (p *tappedPipe) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *tappedPipe) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *tappedPipe) Close() error                { return p.c.Close() }

type notifyHandler notifySink

func (h notifyHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif {
		var params json.RawMessage
		if req.Params != nil {
			params = *req.Params
		}
		h(req.Method, params)
		return
	}
	// The server has no business calling us; say so rather than leave it waiting.
	conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{
		Code:    jsonrpc2.CodeMethodNotFound,
		Message: "the REPL serves no methods",
	})
}

// callResult is one finished call.
type callResult struct {
	Result   json.RawMessage
	Err      *jsonrpc2.Error // the server's error reply
	Duration time.Duration
}

// errDisconnected means the server went away.
var errDisconnected = errors.New("connection to sessionlocks serve lost")

// call sends one request and waits for its reply. params nil omits the member.
// When ctx ends first, the server is sent $/cancelRequest for it.
func (c *client) call(ctx context.Context, method string, params json.RawMessage) (callResult, error) {
	id := jsonrpc2.ID{Num: c.nextID.Add(1)}
	var p any
	if params != nil {
		p = params
	}
	start := time.Now()
	w, err := c.conn.DispatchCall(ctx, method, p, jsonrpc2.PickID(id))
	if err != nil {
		if errors.Is(err, jsonrpc2.ErrClosed) {
			return callResult{}, errDisconnected
		}
		return callResult{}, err
	}
	var res json.RawMessage
	err = w.Wait(ctx, &res)
	d := time.Since(start)
	var rpcErr *jsonrpc2.Error
	switch {
	case err == nil:
		return callResult{Result: res, Duration: d}, nil
	case errors.As(err, &rpcErr):
		return callResult{Err: rpcErr, Duration: d}, nil
	case ctx.Err() != nil:
		c.conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": id.Num})
		return callResult{Duration: d}, ctx.Err()
	case errors.Is(err, jsonrpc2.ErrClosed):
		return callResult{Duration: d}, errDisconnected
	default:
		return callResult{Duration: d}, err
	}
}

// close ends the session the way the IDE does, by closing the child's stdin,
// and waits a little for it to exit before killing it.
func (c *client) close() error {
	c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(2 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
	}
	c.conn.Close()
	return c.exit
}

// frameTap splits a byte stream into Content-Length frames and hands each
// complete one to emit. It sees exactly the bytes on the wire.
type frameTap struct {
	buf  []byte
	emit func(header, body []byte)
}

var headerEnd = []byte("\r\n\r\n")

func (t *frameTap) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	for {
		i := bytes.Index(t.buf, headerEnd)
		if i < 0 {
			return len(p), nil
		}
		header := t.buf[:i]
		n := contentLength(header)
		end := i + len(headerEnd) + n
		if n < 0 {
			// Not Content-Length framing: show what there is and resync.
			t.emit(header, nil)
			t.buf = t.buf[i+len(headerEnd):]
			continue
		}
		if len(t.buf) < end {
			return len(p), nil
		}
		t.emit(header, t.buf[i+len(headerEnd):end])
		t.buf = append(t.buf[:0:0], t.buf[end:]...)
	}
}

func contentLength(header []byte) int {
	for _, line := range bytes.Split(header, []byte("\r\n")) {
		name, value, ok := bytes.Cut(line, []byte(":"))
		if ok && bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
			if err == nil && n >= 0 {
				return n
			}
		}
	}
	return -1
}
