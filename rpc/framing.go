package rpc

// Framing: Content-Length headers or newline-delimited JSON, detected from the
// first byte; one frame read within the size limit, and reading resumed at
// the next header after a frame that cannot be read.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Framing is how messages are delimited on the byte stream.
type Framing int

const (
	FramingAuto   Framing = iota // detected from the first non-blank byte ('{' or '[': line); writes wait for it
	FramingHeader                // the LSP base protocol: "Content-Length: N" headers, a blank line, N bytes of JSON
	FramingLine                  // newline-delimited JSON: one message per line
)

func (f Framing) String() string { return [...]string{"auto", "header", "line"}[f] }

const (
	// DefaultMaxMessageSize is the default limit on one incoming message's body.
	DefaultMaxMessageSize = 8 << 20
	// maxHeaderBytes bounds one header block: LSP's are two short lines.
	maxHeaderBytes = 8 << 10
)

// frameReader reads frames off the byte stream once the framing is known,
// knowing nothing of JSON-RPC: it returns a body, a *wireError for a frame
// that was discarded, or the byte stream's error.
type frameReader struct {
	r       *bufio.Reader
	max     int64 // the largest body kept; a larger one is discarded unread
	pending error // an error to report after a final unterminated line
	// resync is set after a frame whose end is not known (a bad header block,
	// or JSON where headers were expected): the next frame begins at the next
	// header (see skipToHeader).
	resync bool
}

// readLine reads one line of newline-delimited JSON, skipping blank lines. A
// line longer than the limit is discarded as it streams past.
func (f *frameReader) readLine() ([]byte, error) {
	for {
		buf, n, err := f.readLimited(f.max + 2) // +2 for the line's own "\r\n"
		if err != nil {
			if err != io.EOF || n == 0 {
				return nil, err
			}
			// A last line without its newline is still a message.
			f.pending = io.EOF
		}
		if n > f.max+2 {
			return nil, f.tooLarge(n)
		}
		if line := bytes.TrimSpace(buf); len(line) > 0 {
			return line, nil
		}
		if f.pending != nil {
			return nil, f.pending
		}
	}
}

// readHeaderFrame reads one Content-Length framed message. Header names are
// case-insensitive, headers other than Content-Length are ignored, and lines
// may end in "\r\n" or "\n".
func (f *frameReader) readHeaderFrame() ([]byte, error) {
	length, err := f.readHeaders()
	if err != nil {
		return nil, err
	}
	if length > f.max {
		// Discard the body as it streams past: the advertised length may be
		// a lie (4 GB) and must cost no memory.
		if _, err := io.CopyN(io.Discard, f.r, length); err != nil {
			return nil, noEOF(err)
		}
		return nil, f.tooLarge(length)
	}
	if length == 0 {
		return nil, parseError("empty message (Content-Length: 0)")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(f.r, body); err != nil {
		return nil, noEOF(err)
	}
	return body, nil
}

// readHeaders reads one header block and returns its Content-Length.
func (f *frameReader) readHeaders() (int64, error) {
	var first []byte // the header line a resynchronisation found
	if f.resync {
		f.resync = false
		var err error
		if first, err = f.skipToHeader(); err != nil {
			return 0, err
		}
	}
	length, problem, total, started := int64(-1), "", int64(0), first != nil
	for {
		line, n, err := first, int64(len(first)), error(nil)
		switch {
		case first != nil:
			first = nil
		case f.startsJSON():
			// JSON where a header was expected: a client that sends
			// newline-delimited JSON on a stream that began with headers.
			f.resync = true
			if started {
				return 0, parseError("a JSON message where a header line was expected (the header block before it has no blank line); both are discarded, reading goes on at the next header")
			}
			return 0, parseError("a JSON message without Content-Length headers (this stream's framing was chosen from its first byte, which was not '{'); it is discarded, reading goes on at the next header")
		default:
			// The start of a header line is enough to judge it.
			if line, n, err = f.readLimited(1024); err != nil {
				if err == io.EOF && (started || n > 0) {
					err = io.ErrUnexpectedEOF
				}
				return 0, err
			}
		}
		text := strings.TrimRight(string(line), "\r\n")
		if strings.TrimSpace(text) == "" {
			if started {
				break
			}
			continue // blank lines between messages are not part of a header block
		}
		started = true
		if total += n; total > maxHeaderBytes && problem == "" {
			problem = fmt.Sprintf("header block longer than %d bytes", maxHeaderBytes)
		}
		if problem == "" {
			length, problem = headerLine(text, length)
		}
	}
	if problem == "" && length < 0 {
		problem = "header block without a Content-Length header"
	}
	if problem != "" {
		f.resync = true // where this block's body ends is not known
		return 0, parseError(problem + "; the frame is discarded, reading goes on at the next header")
	}
	return length, nil
}

// headerLine reads one header line into the Content-Length seen so far, or
// says what is wrong with it.
func headerLine(text string, length int64) (int64, string) {
	name, value, ok := strings.Cut(text, ":")
	if !ok || !isToken(name) {
		return length, fmt.Sprintf("malformed header line %q: want \"Name: value\", as in \"Content-Length: N\" (Content-Length framing was chosen because the first byte was not '{'; send newline-delimited JSON from the start to use that instead)", clipString(text, 60))
	}
	if !strings.EqualFold(name, "Content-Length") {
		return length, ""
	}
	value = strings.TrimSpace(value)
	n, err := strconv.ParseInt(value, 10, 64)
	switch {
	case err != nil || n < 0:
		return length, fmt.Sprintf("invalid Content-Length %q: want a non-negative integer", clipString(value, 60))
	case length >= 0 && n != length:
		return length, fmt.Sprintf("conflicting Content-Length headers: %d and %d", length, n)
	}
	return n, ""
}

// startsJSON reports whether the next line begins a JSON object or array.
func (f *frameReader) startsJSON() bool {
	b, err := f.r.Peek(1)
	return err == nil && (b[0] == '{' || b[0] == '[')
}

// isToken reports whether s is an HTTP token (RFC 9110), as a header's name must be.
func isToken(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return r >= 0x80 || !isTokenByte(byte(r)) }) < 0
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// contentLength is what resynchronisation looks for mid-line, lower case.
const contentLength = "content-length:"

// skipToHeader discards input up to the next header and returns that header
// line: a line that begins "Name:" with Name a token, or "Content-Length:"
// anywhere, since a body need not end in a newline and the next frame's
// header then begins mid-line.
func (f *frameReader) skipToHeader() ([]byte, error) {
	var name []byte // the current line so far, while it may be a header's name
	lineStart, matched := true, 0
	for {
		b, err := f.r.ReadByte()
		if err != nil {
			return nil, err
		}
		switch c := b | 0x20; { // lower case for letters; ':' and '-' are unchanged
		case c == contentLength[matched]:
			matched++
		case c == contentLength[0]:
			matched = 1
		default:
			matched = 0
		}
		if matched == len(contentLength) {
			rest, _, err := f.readLimited(1024)
			return append([]byte("Content-Length:"), rest...), err
		}
		switch {
		case b == '\n':
			lineStart, name = true, name[:0]
		case !lineStart:
		case b == ':' && len(name) > 0:
			rest, _, err := f.readLimited(1024)
			return append(append(name, ':'), rest...), err
		case isTokenByte(b) && len(name) < 1024:
			name = append(name, b)
		default:
			lineStart = false
		}
	}
}

// readLimited reads one line, keeps at most its first keep bytes and returns
// its full length: the rest of a long line streams past.
func (f *frameReader) readLimited(keep int64) ([]byte, int64, error) {
	var line []byte
	var n int64
	for {
		chunk, err := f.r.ReadSlice('\n')
		n += int64(len(chunk))
		if room := keep - int64(len(line)); room > 0 {
			line = append(line, chunk[:min(int64(len(chunk)), room)]...)
		}
		if err != bufio.ErrBufferFull {
			return line, n, err
		}
	}
}

func (f *frameReader) tooLarge(size int64) error {
	limit := fmt.Sprintf("%d bytes", f.max)
	if f.max >= 1<<20 && f.max%(1<<20) == 0 {
		limit = fmt.Sprintf("%d MiB (%d bytes)", f.max>>20, f.max)
	}
	msg := fmt.Sprintf("message too large: %d bytes exceeds the limit of %s; it was discarded unread", size, limit)
	return &wireError{e: newError(CodeInvalidRequest, msg, &ErrorData{Limit: f.max, Size: size})}
}

func parseError(problem string) error { return badInput(CodeParseError, "parse error: "+problem) }

// noEOF turns the end of input inside a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
