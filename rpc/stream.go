package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"
)

// Framing is how messages are delimited on the byte stream.
type Framing int

const (
	// FramingAuto detects the framing from the first non-whitespace byte the
	// peer sends: '{' or '[' selects FramingLine, anything else FramingHeader.
	// Writes wait until the framing is known.
	FramingAuto Framing = iota
	// FramingHeader is the LSP base protocol: "Content-Length: N" and other
	// headers, a blank line, then N bytes of JSON. vscode-jsonrpc speaks it.
	FramingHeader
	// FramingLine is newline-delimited JSON: one message per line.
	FramingLine
)

func (f Framing) String() string {
	switch f {
	case FramingAuto:
		return "auto"
	case FramingHeader:
		return "header"
	case FramingLine:
		return "line"
	}
	return "Framing(" + strconv.Itoa(int(f)) + ")"
}

// DefaultMaxMessageSize is the default limit on one incoming message's body.
const DefaultMaxMessageSize = 8 << 20

// maxHeaderBytes bounds one Content-Length header block. LSP headers are two
// short lines; anything near this size is garbage, not a header.
const maxHeaderBytes = 8 << 10

// StreamOptions configure a Stream.
type StreamOptions struct {
	// Framing selects the framing; FramingAuto detects it from the input.
	Framing Framing
	// MaxMessageSize limits one incoming message body, in bytes; a larger one
	// is discarded unread and answered with an error. 0 means
	// DefaultMaxMessageSize.
	MaxMessageSize int64
	// Client marks the client end of a connection: input that is not a valid
	// message is logged and skipped instead of answered, and responses with a
	// null id (the server's answers to unparseable input) are logged.
	Client bool
	// Logger receives warnings about skipped input; nil means slog.Default().
	Logger *slog.Logger
	// Trace, if set, is called with every message body read (in is true) or
	// written, in order. It must not retain body.
	Trace func(in bool, body []byte)

	// onEOF, if set, runs when the input ends or fails, before ReadObject
	// reports it and the connection closes: the server waits there for requests
	// still running so that their answers are not lost.
	onEOF func()
}

// A Stream is a jsonrpc2.ObjectStream over a byte stream, hardened for a
// peer that may send anything. jsonrpc2.Conn closes the connection when
// ReadObject returns an error, so ReadObject returns one only when the byte
// stream itself fails or ends; malformed, oversize or invalid messages are
// answered here (on the server end) and reading goes on.
type Stream struct {
	rwc     io.ReadWriteCloser
	r       *bufio.Reader
	opts    StreamOptions
	log     *slog.Logger
	max     int64
	rframe  Framing // the reader's view, set once detected
	lineBuf []byte
	pending error // an error to report after a final unterminated line

	detected  chan struct{} // closed once wframe is set
	wframe    Framing
	closed    chan struct{}
	closeOnce sync.Once
	closeErr  error

	broken     chan struct{} // closed when a write fails: the peer stopped reading for good
	brokenOnce sync.Once
	brokenErr  error

	// resync is set after a header block that could not be read: the next
	// frame begins at the next "Content-Length:", wherever it is (a body
	// need not end in a newline, so the next header may begin mid-line).
	resync bool

	wmu  sync.Mutex
	wbuf []byte
}

var _ jsonrpc2.ObjectStream = (*Stream)(nil)

// NewStream returns a Stream over rwc. Closing the Stream closes rwc.
func NewStream(rwc io.ReadWriteCloser, opts StreamOptions) *Stream {
	s := &Stream{
		rwc:      rwc,
		r:        bufio.NewReaderSize(rwc, 64<<10),
		opts:     opts,
		log:      opts.Logger,
		max:      opts.MaxMessageSize,
		detected: make(chan struct{}),
		closed:   make(chan struct{}),
		broken:   make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.max <= 0 {
		s.max = DefaultMaxMessageSize
	}
	if opts.Framing != FramingAuto {
		s.setFraming(opts.Framing)
	}
	return s
}

// Framing returns the framing in use, FramingAuto until it is detected.
func (s *Stream) Framing() Framing {
	select {
	case <-s.detected:
		return s.wframe
	default:
		return FramingAuto
	}
}

func (s *Stream) setFraming(f Framing) {
	s.rframe = f
	s.wframe = f
	close(s.detected)
}

// wireError is a problem with one incoming message that is answered with a
// JSON-RPC error while the stream goes on.
type wireError struct {
	id   json.RawMessage // nil means null
	code int64
	msg  string
	data *ErrorData
	skip bool // log it, do not answer
}

func (e *wireError) Error() string { return e.msg }

// ReadObject reads the next valid JSON-RPC message into v (a jsonrpc2
// message). Invalid input is answered (or, on a client, logged) and skipped.
func (s *Stream) ReadObject(v any) error {
	for {
		body, err := s.readFrame()
		if err == nil {
			if s.opts.Trace != nil {
				s.opts.Trace(true, body)
			}
			err = s.check(body)
			if err == nil {
				err = json.Unmarshal(body, v)
				if err == nil {
					return nil
				}
				err = &wireError{code: CodeInvalidRequest, msg: "invalid request: " + err.Error()}
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
			s.log.Warn("skipping a message", "problem", we.msg)
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
	if s.pending != nil {
		return nil, s.pending
	}
	if s.rframe == FramingAuto {
		for {
			b, err := s.r.ReadByte()
			if err != nil {
				return nil, err
			}
			if !isSpace(b) {
				s.r.UnreadByte()
				if b == '{' || b == '[' {
					s.setFraming(FramingLine)
				} else {
					s.setFraming(FramingHeader)
				}
				s.log.Debug("framing detected", "framing", s.rframe.String())
				break
			}
		}
	}
	if s.rframe == FramingLine {
		return s.readLine()
	}
	return s.readHeaderFrame()
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// readLine reads one line of newline-delimited JSON, skipping blank lines. A
// line longer than the limit is discarded as it streams past.
func (s *Stream) readLine() ([]byte, error) {
	for {
		buf := s.lineBuf[:0]
		var n int64
		over := false
		var err error
		for {
			var chunk []byte
			chunk, err = s.r.ReadSlice('\n')
			n += int64(len(chunk))
			if !over {
				// +2 leaves room for the line's own "\r\n".
				if n > s.max+2 {
					over = true
					buf = buf[:0]
				} else {
					buf = append(buf, chunk...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			break
		}
		if cap(buf) <= 1<<20 {
			s.lineBuf = buf // reuse small buffers only; a huge one goes back to the GC
		}
		if err != nil {
			if err != io.EOF || n == 0 {
				return nil, err
			}
			// A last line without its newline is still a message.
			s.pending = io.EOF
		}
		if over {
			return nil, s.tooLarge(n)
		}
		line := bytes.TrimSpace(buf)
		if len(line) == 0 {
			if s.pending != nil {
				return nil, s.pending
			}
			continue
		}
		return line, nil
	}
}

// readHeaderFrame reads one Content-Length framed message. Header names are
// case-insensitive, headers other than Content-Length are ignored, and lines
// may end in "\r\n" or "\n".
func (s *Stream) readHeaderFrame() ([]byte, error) {
	length := int64(-1)
	problem := ""
	total := 0
	started := false
	var first []byte // the header line a resynchronisation found
	if s.resync {
		s.resync = false
		rest, err := s.skipToContentLength()
		if err != nil {
			return nil, err
		}
		first = append([]byte("Content-Length:"), rest...)
	}
	for {
		line, n, err := first, len(first), error(nil)
		if first != nil {
			first = nil
		} else {
			line, n, err = s.readHeaderLine()
		}
		if err != nil {
			if err == io.EOF && (started || n > 0) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if total += n; total > maxHeaderBytes && problem == "" {
			problem = fmt.Sprintf("header block longer than %d bytes", maxHeaderBytes)
		}
		text := strings.TrimRight(string(line), "\r\n")
		if strings.TrimSpace(text) == "" {
			if !started {
				total = 0 // blank lines between messages are not part of a header block
				continue
			}
			break
		}
		started = true
		if problem != "" {
			continue
		}
		name, value, ok := strings.Cut(text, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok || name == "":
			problem = fmt.Sprintf("malformed header line %s: want \"Content-Length: N\" (Content-Length framing was chosen because the first byte was not '{'; send newline-delimited JSON from the start to use that instead)", quoteShort(text))
		case strings.EqualFold(name, "Content-Length"):
			n, err := strconv.ParseInt(value, 10, 64)
			switch {
			case err != nil || n < 0:
				problem = fmt.Sprintf("invalid Content-Length %s: want a non-negative integer", quoteShort(value))
			case length >= 0 && n != length:
				problem = fmt.Sprintf("conflicting Content-Length headers: %d and %d", length, n)
			default:
				length = n
			}
		}
	}
	if problem != "" {
		// Where this block's body ends is not known: read on from the next
		// header, losing at worst this one frame.
		s.resync = true
		return nil, &wireError{code: CodeParseError, msg: "parse error: " + problem + "; the stream goes on at the next Content-Length header"}
	}
	if length < 0 {
		s.resync = true
		return nil, &wireError{code: CodeParseError, msg: "parse error: header block without a Content-Length header; the stream goes on at the next Content-Length header"}
	}
	if length > s.max {
		// Discard the body as it streams past: the advertised length may be
		// a lie (4 GB) and must cost no memory.
		if _, err := io.CopyN(io.Discard, s.r, length); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return nil, s.tooLarge(length)
	}
	if length == 0 {
		return nil, &wireError{code: CodeParseError, msg: "parse error: empty message (Content-Length: 0)"}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// contentLength is what resynchronisation looks for, lower case.
const contentLength = "content-length:"

// skipToContentLength discards input up to and including the next
// "Content-Length:" (in any case), and returns the rest of its line.
func (s *Stream) skipToContentLength() ([]byte, error) {
	matched := 0
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return nil, err
		}
		c := b | 0x20 // lower case for letters; ':' and '-' are unchanged
		switch {
		case c == contentLength[matched]:
			matched++
		case c == contentLength[0]:
			matched = 1
		default:
			matched = 0
		}
		if matched == len(contentLength) {
			line, _, err := s.readHeaderLine()
			return line, err
		}
	}
}

// readHeaderLine returns the start of one header line (up to 1 KiB, enough
// to judge it) and the line's full length; the rest of a long line streams
// past without being kept.
func (s *Stream) readHeaderLine() ([]byte, int, error) {
	var line []byte
	n := 0
	for {
		chunk, err := s.r.ReadSlice('\n')
		n += len(chunk)
		if room := 1024 - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		if err != bufio.ErrBufferFull {
			return line, n, err
		}
	}
}

func (s *Stream) tooLarge(size int64) error {
	return &wireError{
		code: CodeInvalidRequest,
		msg:  fmt.Sprintf("message too large: %d bytes exceeds the limit of %s; it was discarded unread", size, formatSize(s.max)),
		data: &ErrorData{Limit: s.max, Size: size},
	}
}

func formatSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB (%d bytes)", n>>20, n)
	}
	return fmt.Sprintf("%d bytes", n)
}

func quoteShort(s string) string {
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return strconv.Quote(s)
}

// check validates a message body as a JSON-RPC 2.0 request, notification or
// response before jsonrpc2 sees it, so that every problem gets an answer that
// names it instead of closing the connection.
func (s *Stream) check(body []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) || !json.Valid(body) {
			msg := "parse error: " + err.Error()
			if se != nil {
				msg = fmt.Sprintf("parse error at byte %d: %v", se.Offset, err)
			}
			if s.rframe == FramingLine && strings.Contains(err.Error(), "unexpected end of JSON input") {
				msg += " (with newline-delimited JSON each message must be on a single line)"
			}
			return &wireError{code: CodeParseError, msg: msg}
		}
		if body[0] == '[' {
			var batch []json.RawMessage
			json.Unmarshal(body, &batch)
			if len(batch) == 0 {
				return &wireError{code: CodeInvalidRequest, msg: "invalid request: empty batch"}
			}
			return &wireError{code: CodeInvalidRequest, msg: fmt.Sprintf("batch requests are not supported: send each of the %d requests as a message of its own", len(batch))}
		}
		return &wireError{code: CodeInvalidRequest, msg: "invalid request: a message must be a JSON object, got " + jsonKind(body)}
	}
	if m == nil {
		return &wireError{code: CodeInvalidRequest, msg: "invalid request: a message must be a JSON object, got null"}
	}

	rawID, hasID := m["id"]
	id, idProblem := checkID(rawID, hasID)
	fail := func(format string, args ...any) error {
		return &wireError{id: id, code: CodeInvalidRequest, msg: "invalid request: " + fmt.Sprintf(format, args...)}
	}
	if v, ok := m["jsonrpc"]; !ok {
		return fail(`missing "jsonrpc": "2.0"`)
	} else if string(v) != `"2.0"` {
		return fail(`"jsonrpc" must be "2.0", got %s`, short(v))
	}
	method, isRequest := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case isRequest && (hasResult || hasError):
		return fail(`a message cannot have both "method" and "result" or "error"`)
	case isRequest:
		var name string
		if json.Unmarshal(method, &name) != nil {
			return fail(`"method" must be a string, got %s`, jsonKind(method))
		}
		if name == "" {
			return fail(`"method" must not be empty`)
		}
		if idProblem != "" {
			return fail("%s", idProblem)
		}
		if p, ok := m["params"]; ok {
			if k := jsonKind(p); k != "object" && k != "array" && k != "null" {
				return fail(`"params" must be an object or an array, got %s`, k)
			}
		}
	case hasResult || hasError:
		if !hasID || string(rawID) == "null" {
			// The peer's answer to input it could not parse. Answering an
			// answer could loop between two servers, so it is only logged.
			var e struct {
				Error *jsonrpc2.Error `json:"error"`
			}
			json.Unmarshal(body, &e)
			msg := "a response without an id"
			if e.Error != nil {
				msg = fmt.Sprintf("peer reported error %d: %s", e.Error.Code, e.Error.Message)
			}
			return &wireError{skip: true, msg: msg}
		}
		if idProblem != "" {
			return fail("%s", idProblem)
		}
		if hasResult && hasError {
			return fail(`a response cannot have both "result" and "error"`)
		}
	default:
		return fail(`missing "method"`)
	}
	return nil
}

// checkID returns the id to echo in an error reply (nil for null) and what,
// if anything, is wrong with it. jsonrpc2.ID holds a string or an integer in
// [0, 2^63), so other ids are refused rather than silently altered.
func checkID(raw json.RawMessage, present bool) (json.RawMessage, string) {
	if !present {
		return nil, ""
	}
	switch jsonKind(raw) {
	case "string":
		// Echoed through encoding/json, which writes invalid UTF-8 as
		// U+FFFD: an answer is always valid UTF-8, whatever came in.
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, `"id" is not a valid JSON string`
		}
		id, _ := json.Marshal(s)
		return id, ""
	case "number":
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil && n >= 0 {
			return raw, ""
		}
		return raw, fmt.Sprintf(`"id" must be a string or a non-negative integer, got %s`, short(raw))
	case "null":
		return nil, `"id" must not be null: omit it to send a notification`
	default:
		return nil, fmt.Sprintf(`"id" must be a string or a non-negative integer, got %s`, jsonKind(raw))
	}
}

// jsonKind names the kind of a JSON value from its first byte.
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func short(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// WriteObject writes one message in the stream's framing. Before the framing
// is detected it waits.
func (s *Stream) WriteObject(obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	return s.writeFrame(data)
}

func (s *Stream) writeError(we *wireError) error {
	id := we.id
	if id == nil {
		id = json.RawMessage("null")
	}
	e := &jsonrpc2.Error{Code: we.code, Message: we.msg}
	if we.data != nil {
		e.SetError(we.data)
	}
	// The same member order as jsonrpc2.Response, so every reply looks alike.
	data, err := json.Marshal(struct {
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc2.Error `json:"error"`
		JSONRPC string          `json:"jsonrpc"`
	}{id, e, "2.0"})
	if err != nil {
		return err
	}
	s.log.Debug("answered invalid input", "code", we.code, "message", we.msg)
	return s.writeFrame(data)
}

func (s *Stream) writeFrame(data []byte) error { return s.write(nil, data) }

// frameRoom is the room writeFramed wants in front of a message for the
// Content-Length header.
const frameRoom = len("Content-Length: ") + 20 + len("\r\n\r\n")

// writeFramed is writeFrame for a message built behind frameRoom unused
// bytes, msg[frameRoom:]: the header is written into that room, so that a
// large answer goes out without being copied again. msg is modified.
func (s *Stream) writeFramed(msg []byte) error { return s.write(msg, msg[frameRoom:]) }

// write sends data as one frame; room, if not nil, is data with frameRoom
// bytes in front of it that may be written over.
func (s *Stream) write(room, data []byte) error {
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
	// One Write per message: the pipe never sees half a frame from us
	// interleaved with anything else, and it costs one system call.
	var b []byte
	switch {
	case s.wframe == FramingHeader && room != nil:
		var hdr [frameRoom]byte
		h := appendHeader(hdr[:0], len(data))
		b = room[frameRoom-len(h):]
		copy(b, h)
	case s.wframe == FramingHeader:
		b = append(appendHeader(s.wbuf[:0], len(data)), data...)
	case room != nil:
		b = append(data, '\n')
	default:
		b = append(append(s.wbuf[:0], data...), '\n')
	}
	if room == nil && cap(b) <= 1<<20 {
		s.wbuf = b
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

// Broken is closed once a write has failed (the peer closed its end of the
// output, EPIPE): a server then has no one to answer and stops, as it
// does when its input ends.
func (s *Stream) Broken() <-chan struct{} { return s.broken }

// BrokenErr is the write error that closed Broken.
func (s *Stream) BrokenErr() error {
	select {
	case <-s.broken:
		return s.brokenErr
	default:
		return nil
	}
}

func appendHeader(b []byte, n int) []byte {
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, "\r\n\r\n"...)
}

// Close closes the underlying byte stream; pending writes fail.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.closeErr = s.rwc.Close()
	})
	return s.closeErr
}
