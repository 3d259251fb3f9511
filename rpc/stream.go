package rpc

// Stream, the jsonrpc2.ObjectStream under a connection's jsonrpc2.Conn: a
// peer's bad input must not close the connection, so each message is read
// from its frame (framing.go) and checked (validate.go) before jsonrpc2 sees
// it, and answered here when bad. Everything else is written by the Conn.

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// StreamOptions configure a Stream.
type StreamOptions struct {
	Framing Framing // FramingAuto detects it from the input
	// MaxMessageSize limits one incoming body; a larger one is discarded
	// unread and answered with an error. 0 means DefaultMaxMessageSize.
	MaxMessageSize int64
	// Client marks the client end of a connection: input that is not a valid
	// message is logged and skipped instead of answered.
	Client bool
	Logger *slog.Logger // warnings about skipped input; nil means slog.Default()
	// Trace, if set, is called with every message body read (in is true) or
	// written, in order. It must not retain body.
	Trace func(in bool, body []byte)
	// onEOF, if set, runs when the input ends or fails, before ReadObject
	// reports it and the connection closes: the server waits there for
	// requests still running so that their answers are not lost.
	onEOF func()
}

// A Stream is a jsonrpc2.ObjectStream over a byte stream. ReadObject fails
// only when the byte stream fails or ends: jsonrpc2.Conn closes on an error.
type Stream struct {
	rwc  io.ReadWriteCloser
	in   frameReader
	opts StreamOptions
	log  *slog.Logger
	// framing is set once, by NewStream or by the reader when it detects
	// it; writers read it after detected is closed.
	framing  Framing
	detected chan struct{}
	closed   chan struct{}
	close    func() error // once
	// broken is closed once a write has failed (EPIPE), brokenErr set
	// before: a server then has no one to answer and stops.
	broken     chan struct{}
	brokenOnce sync.Once
	brokenErr  error
	wmu        sync.Mutex // one frame written at a time, by the Conn or by writeError
	warn       rateLimit  // warnings about skipped input, which a peer can send in a loop

	// reply is the response the Conn is about to write, as its OnSend hook
	// saw it: the Conn calls the hook and WriteObject under one lock.
	reply *jsonrpc2.Response
}

// NewStream returns a Stream over rwc. Closing the Stream closes rwc.
func NewStream(rwc io.ReadWriteCloser, opts StreamOptions) *Stream {
	s := &Stream{
		rwc:      rwc,
		in:       frameReader{r: bufio.NewReaderSize(rwc, 64<<10), max: opts.MaxMessageSize},
		opts:     opts,
		log:      cmp.Or(opts.Logger, slog.Default()),
		detected: make(chan struct{}),
		closed:   make(chan struct{}),
		broken:   make(chan struct{}),
	}
	s.close = sync.OnceValue(func() error { close(s.closed); return s.rwc.Close() })
	if s.in.max <= 0 {
		s.in.max = DefaultMaxMessageSize
	}
	if opts.Framing != FramingAuto {
		s.setFraming(opts.Framing)
	}
	return s
}

// ReadObject reads the next valid JSON-RPC message into v (a jsonrpc2
// message). Invalid input is answered (or, on a client, logged) and skipped.
func (s *Stream) ReadObject(v any) error {
	for {
		body, err := s.readFrame()
		if err == nil {
			if s.opts.Trace != nil {
				s.opts.Trace(true, body)
			}
			if err = s.check(body); err == nil {
				if err = json.Unmarshal(body, v); err == nil {
					return nil
				}
				err = badInput(CodeInvalidRequest, "invalid request: "+err.Error())
			}
		}
		var we *wireError
		if !errors.As(err, &we) {
			// The input ended (or broke): whatever the cause, answers to
			// requests already read can still be written.
			if s.opts.onEOF != nil {
				s.opts.onEOF()
			}
			return err
		}
		if s.opts.Client || we.skip {
			s.warn.warn(s.log, "skip", "skipping a message", "problem", we.e.Message)
			continue
		}
		if err := s.writeError(we); err != nil {
			return err
		}
	}
}

// readFrame returns the next message body, a *wireError for a bad frame that
// was skipped, or the byte stream's error.
func (s *Stream) readFrame() ([]byte, error) {
	if s.in.pending != nil {
		return nil, s.in.pending
	}
	for s.framing == FramingAuto {
		b, err := s.in.r.ReadByte()
		if err != nil {
			return nil, err
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			s.setFraming(FramingLine)
		default:
			s.setFraming(FramingHeader)
		}
		s.in.r.UnreadByte()
		s.log.Debug("framing detected", "framing", s.framing.String())
	}
	if s.framing == FramingLine {
		return s.in.readLine()
	}
	return s.in.readHeaderFrame()
}

// sending is the Conn's OnSend hook: it notes the response about to be
// written (nil for a request or notification).
func (s *Stream) sending(_ *jsonrpc2.Request, resp *jsonrpc2.Response) { s.reply = resp }

// WriteObject writes one message in the stream's framing. Before the framing
// is detected it waits.
func (s *Stream) WriteObject(obj any) error {
	var data []byte
	if r := s.reply; r != nil && r.Error == nil && r.Result != nil && r.Meta == nil {
		// A result as Conn.Reply encoded it, framed without encoding it
		// again: json.Marshal of the Conn's message would check and copy
		// the result three more times, most of a large listing's time.
		id, _ := r.ID.MarshalJSON()
		data = make([]byte, 0, len(*r.Result)+len(id)+32)
		data = append(append(append(data, `{"id":`...), id...), `,"result":`...)
		data = append(append(data, *r.Result...), `,"jsonrpc":"2.0"}`...)
	} else {
		var err error
		if data, err = json.Marshal(obj); err != nil {
			return err
		}
	}
	s.reply = nil
	return s.writeFrame(data)
}

func (s *Stream) setFraming(f Framing) {
	s.framing = f
	close(s.detected)
}

// writeFrame sends data as one frame, in one Write: the pipe never sees half
// a frame interleaved with anything else.
func (s *Stream) writeFrame(data []byte) error {
	select {
	case <-s.detected:
	case <-s.closed:
		return jsonrpc2.ErrClosed
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	select {
	case <-s.closed:
		return jsonrpc2.ErrClosed
	default:
	}
	var b []byte
	if s.framing == FramingHeader {
		b = strconv.AppendInt(append(make([]byte, 0, len(data)+32), "Content-Length: "...), int64(len(data)), 10)
		b = append(append(b, "\r\n\r\n"...), data...)
	} else {
		b = append(data, '\n')
	}
	if s.opts.Trace != nil {
		s.opts.Trace(false, data)
	}
	_, err := s.rwc.Write(b)
	if err != nil {
		// EPIPE and its kin: nobody will read an answer again.
		s.brokenOnce.Do(func() { s.brokenErr = err; close(s.broken) })
	}
	return err
}

// Close closes the underlying byte stream; pending writes fail.
func (s *Stream) Close() error { return s.close() }
