package repl

// Everything the REPL prints: one printer, colours, results and errors.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
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
	redraw    func() // asks the line editor to redraw prompt and line
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

func (p *printer) paint(code, s string) string {
	if !p.color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// print writes s from the REPL's own loop.
func (p *printer) print(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	io.WriteString(p.w, s)
}

func (p *printer) printf(format string, a ...any) { p.print(fmt.Sprintf(format, a...)) }

// async writes s, which ends in a newline, from any goroutine.
func (p *printer) async(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.prompting {
		io.WriteString(p.w, s)
		return
	}
	// Raw mode: the line discipline still maps \n to \r\n (liner leaves
	// OPOST alone), so only the start of the prompt line needs clearing.
	io.WriteString(p.w, "\r\x1b[K"+s)
	if p.redraw != nil {
		p.redraw()
	}
}

func (p *printer) setPrompting(on bool) {
	p.mu.Lock()
	p.prompting = on
	p.mu.Unlock()
}

// json renders raw indented, coloured when the printer colours.
func (p *printer) json(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw) + "\n"
	}
	b.WriteByte('\n')
	if !p.color {
		return b.String()
	}
	return colorJSON(b.String())
}

// colorJSON paints valid, indented JSON token by token.
func colorJSON(s string) string {
	var b strings.Builder
	paint := func(code, tok string) { b.WriteString("\x1b[" + code + "m" + tok + "\x1b[0m") }
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			j++
			k := j
			for k < len(s) && (s[k] == ' ') {
				k++
			}
			if k < len(s) && s[k] == ':' {
				paint(sgrKey, s[i:j])
			} else {
				paint(sgrString, s[i:j])
			}
			i = j
		case c == '-' || (c >= '0' && c <= '9'):
			j := i
			for j < len(s) && strings.IndexByte("+-.eE0123456789", s[j]) >= 0 {
				j++
			}
			paint(sgrNumber, s[i:j])
			i = j
		case c == 't' || c == 'f' || c == 'n':
			j := i
			for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
				j++
			}
			paint(sgrLiteral, s[i:j])
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
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
