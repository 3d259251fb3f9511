package repl

// The REPL's end of the wire: `sessionlocks serve` as a child process.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"time"

	"github.com/copilot-ide/sessionlocks/rpc"
)

// client is the REPL's end of the wire: `sessionlocks serve` as a child
// process, spoken to with rpc.Client over the child's stdin and stdout in the
// Content-Length framing the IDE uses, so that what the REPL shows is what
// the IDE would get. The bytes both ways also pass through frame taps, which
// see them exactly as sent: headers included, keys in the order written.
type client struct {
	cmd    *exec.Cmd
	rpc    *rpc.Client
	exited chan struct{} // closed when the child has been reaped
	exit   error         // the child's exit status; valid after exited
}

// frameSink receives every complete frame that crosses the wire, raw:
// out is true for frames the REPL sent.
type frameSink func(out bool, header, body []byte)

// startClient starts argv (the serve command) and connects to it. The
// child's stderr, and the client's own complaints, go to logw; answers to
// calls that were interrupted go to late.
func startClient(argv []string, logw io.Writer, frames frameSink, late func(method string, result json.RawMessage, err *rpc.Error)) (*client, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = logw
	Isolate(cmd)
	rc, err := rpc.DialCommand(cmd, rpc.ClientOptions{
		Framing:      rpc.FramingHeader,
		Logger:       slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn})),
		OnLateAnswer: late,
		WrapPipes: func(stdout io.ReadCloser, stdin io.WriteCloser) (io.ReadCloser, io.WriteCloser) {
			return readCloser{io.TeeReader(stdout, &frameTap{emit: func(h, b []byte) { frames(false, h, b) }}), stdout},
				// The tap goes first, so that a request is shown before its reply can be.
				writeCloser{io.MultiWriter(&frameTap{emit: func(h, b []byte) { frames(true, h, b) }}, stdin), stdin}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	c := &client{cmd: cmd, exited: make(chan struct{}), rpc: rc}
	go func() {
		// Wait closes the stdout pipe, so it must come after the client has
		// read everything the child wrote.
		<-c.rpc.Done()
		c.exit = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

type writeCloser struct {
	io.Writer
	io.Closer
}

// callResult is one finished call.
type callResult struct {
	Result   json.RawMessage
	Err      *rpc.Error // the server's error answer
	Duration time.Duration
}

// errDisconnected means the server went away.
var errDisconnected = errors.New("connection to sessionlocks serve lost")

// call sends one request and waits for its answer; params nil omits the
// member. When ctx ends first, rpc.Client sends $/cancelRequest for it.
func (c *client) call(ctx context.Context, method string, params json.RawMessage) (callResult, error) {
	var p any
	if params != nil {
		p = params
	}
	var res json.RawMessage
	start := time.Now()
	err := c.rpc.Call(ctx, method, p, &res)
	d := time.Since(start)
	var rpcErr *rpc.Error
	switch {
	case err == nil:
		return callResult{Result: res, Duration: d}, nil
	case errors.As(err, &rpcErr):
		return callResult{Err: rpcErr, Duration: d}, nil
	case ctx.Err() != nil:
		return callResult{Duration: d}, ctx.Err()
	case c.closed():
		return callResult{Duration: d}, errDisconnected
	}
	return callResult{Duration: d}, err
}

// notify sends a notification, which gets no answer.
func (c *client) notify(ctx context.Context, method string, params json.RawMessage) error {
	var p any
	if params != nil {
		p = params
	}
	if err := c.rpc.Notify(ctx, method, p); err != nil {
		if c.closed() {
			return errDisconnected
		}
		return err
	}
	return nil
}

func (c *client) closed() bool {
	select {
	case <-c.rpc.Done():
		return true
	default:
		return false
	}
}

// close ends the session the way the IDE does, by closing the child's stdin,
// and waits a little for it to exit before killing it.
func (c *client) close() error {
	c.rpc.Close()
	select {
	case <-c.exited:
	case <-time.After(2 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
	}
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
