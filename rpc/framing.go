package rpc

// Framing: Content-Length headers or newline-delimited JSON, detected from the
// first byte; a frame read within the size limit, and reading resumed at the
// next Content-Length header after a bad header block.

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

// frameReader reads frames off the byte stream once the framing is known,
// knowing nothing of JSON-RPC: it returns a body, a *wireError for a frame
// that was skipped, or the byte stream's error.
type frameReader struct {
	r       *bufio.Reader
	max     int64 // the largest body kept; a larger one is skipped unread
	lineBuf []byte
	pending error // an error to report after a final unterminated line

	// resync is set after a header block that could not be read: the next
	// frame begins at the next "Content-Length:", wherever it is (a body
	// need not end in a newline, so the next header may begin mid-line).
	resync bool
}

// readLine reads one line of newline-delimited JSON, skipping blank lines. A
// line longer than the limit is discarded as it streams past.
func (f *frameReader) readLine() ([]byte, error) {
	for {
		buf := f.lineBuf[:0]
		var n int64
		over := false
		var err error
		for {
			var chunk []byte
			chunk, err = f.r.ReadSlice('\n')
			n += int64(len(chunk))
			if !over {
				// +2 leaves room for the line's own "\r\n".
				if n > f.max+2 {
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
			f.lineBuf = buf // reuse small buffers only; a huge one goes back to the GC
		}
		if err != nil {
			if err != io.EOF || n == 0 {
				return nil, err
			}
			// A last line without its newline is still a message.
			f.pending = io.EOF
		}
		if over {
			return nil, f.tooLarge(n)
		}
		line := bytes.TrimSpace(buf)
		if len(line) == 0 {
			if f.pending != nil {
				return nil, f.pending
			}
			continue
		}
		return line, nil
	}
}

// readHeaderFrame reads one Content-Length framed message. Header names are
// case-insensitive, headers other than Content-Length are ignored, and lines
// may end in "\r\n" or "\n".
func (f *frameReader) readHeaderFrame() ([]byte, error) {
	length := int64(-1)
	problem := ""
	total := 0
	started := false
	var first []byte // the header line a resynchronisation found
	if f.resync {
		f.resync = false
		rest, err := f.skipToContentLength()
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
			line, n, err = f.readHeaderLine()
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
		f.resync = true
		return nil, &wireError{code: CodeParseError, msg: "parse error: " + problem + "; the stream goes on at the next Content-Length header"}
	}
	if length < 0 {
		f.resync = true
		return nil, &wireError{code: CodeParseError, msg: "parse error: header block without a Content-Length header; the stream goes on at the next Content-Length header"}
	}
	if length > f.max {
		// Discard the body as it streams past: the advertised length may be
		// a lie (4 GB) and must cost no memory.
		if _, err := io.CopyN(io.Discard, f.r, length); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return nil, f.tooLarge(length)
	}
	if length == 0 {
		return nil, &wireError{code: CodeParseError, msg: "parse error: empty message (Content-Length: 0)"}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(f.r, body); err != nil {
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
func (f *frameReader) skipToContentLength() ([]byte, error) {
	matched := 0
	for {
		b, err := f.r.ReadByte()
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
			line, _, err := f.readHeaderLine()
			return line, err
		}
	}
}

// readHeaderLine returns the start of one header line (up to 1 KiB, enough
// to judge it) and the line's full length; the rest of a long line streams
// past without being kept.
func (f *frameReader) readHeaderLine() ([]byte, int, error) {
	var line []byte
	n := 0
	for {
		chunk, err := f.r.ReadSlice('\n')
		n += len(chunk)
		if room := 1024 - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		if err != bufio.ErrBufferFull {
			return line, n, err
		}
	}
}

func (f *frameReader) tooLarge(size int64) error {
	return &wireError{
		code: CodeInvalidRequest,
		msg:  fmt.Sprintf("message too large: %d bytes exceeds the limit of %s; it was discarded unread", size, formatSize(f.max)),
		data: &ErrorData{Limit: f.max, Size: size},
	}
}

func formatSize(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB (%d bytes)", n>>20, n)
	}
	return fmt.Sprintf("%d bytes", n)
}

// quoteShort gives header text, shortened and quoted, for an error message.
func quoteShort(s string) string { return strconv.Quote(clipString(s, 60)) }

func appendHeader(b []byte, n int) []byte {
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, "\r\n\r\n"...)
}
