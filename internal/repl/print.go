package repl

// Everything the REPL prints goes through one printer, which escapes what
// came from the server or the disk (internal/escape), paints it when asked
// to, and puts output that arrives on its own above the prompt.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/escape"
)

// printer serialises everything the REPL writes. Output that arrives on its
// own (notifications, trace frames, the server's log) while the user is
// typing goes on a fresh line above the prompt, which is then redrawn with
// the half-typed line intact.
type printer struct {
	mu        sync.Mutex
	w         io.Writer
	color     bool
	prompting bool
}

// ANSI SGR codes.
const (
	sgrKey     = "36"   // cyan
	sgrString  = "32"   // green
	sgrNumber  = "33"   // yellow
	sgrLiteral = "35"   // magenta: true, false, null
	sgrError   = "1;31" // bold red
	sgrDim     = "2"
	sgrNotice  = "1;34" // bold blue
)

// line is s, escaped, painted with code (none: ""), and a newline.
func (p *printer) line(code, s string) string {
	s = escape.Text(s)
	if p.color && code != "" && s != "" {
		s = "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	return s + "\n"
}

// json renders raw indented, its hidden characters as JSON escapes,
// coloured when the printer colours.
func (p *printer) json(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return p.line("", string(raw))
	}
	s := string(escape.JSON(b.Bytes())) + "\n"
	if p.color {
		return colorJSON(s)
	}
	return s
}

// warn writes a line to w (stderr), escaped: it may name paths and errors.
func warn(w io.Writer, a ...any) {
	io.WriteString(w, escape.Text(strings.TrimSuffix(fmt.Sprintln(a...), "\n"))+"\n")
}

// print writes s from any goroutine. While liner prompts, s, which then
// ends in a newline, goes above the prompt.
func (p *printer) print(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.prompting {
		io.WriteString(p.w, s)
		return
	}
	// Raw mode: the line discipline still maps \n to \r\n (liner leaves
	// OPOST alone), so only the start of the prompt line needs clearing.
	io.WriteString(p.w, "\r\x1b[K"+s)
	redrawLine()
}

func (p *printer) setPrompting(on bool) {
	p.mu.Lock()
	p.prompting = on
	p.mu.Unlock()
}

// jsonToken is a string (a key when a colon follows), a number, or true,
// false or null, in valid JSON.
var jsonToken = regexp.MustCompile(`"(?:[^"\\]|\\.)*":?|-?[0-9][-+.eE0-9]*|[a-z]+`)

// colorJSON paints valid, indented JSON token by token.
func colorJSON(s string) string {
	return jsonToken.ReplaceAllStringFunc(s, func(tok string) string {
		code, colon := sgrNumber, ""
		switch {
		case strings.HasSuffix(tok, `":`):
			code, tok, colon = sgrKey, tok[:len(tok)-1], ":"
		case tok[0] == '"':
			code = sgrString
		case tok[0] >= 'a':
			code = sgrLiteral
		}
		return "\x1b[" + code + "m" + tok + "\x1b[0m" + colon
	})
}

// duration is short and stable in width: 850µs, 3.2ms, 1.25s.
func duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
