// Package escape keeps what came from the disk or from another process
// from reaching a person's terminal raw: session names come from prompts,
// command lines from anyone. Every C0 and C1 control, DEL, and every
// invisible or direction-changing format character (U+200B-U+200F,
// U+202A-U+202E, U+2060-U+2069, U+FEFF, the rest of Unicode's Cf, line and
// paragraph separators) is shown escaped, never emitted: in plain text
// Go-quoted (\x1b, \u202e), in JSON text as a JSON escape (\u001b,
// \u202e), so that what is printed stays valid JSON. Anything else, a
// backslash in a Windows path included, is shown as it is.
package escape

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// hidden reports whether r is never written raw: a control, or a
// character a terminal does not show but acts on (format characters:
// bidi overrides, zero-width characters, the byte order mark).
func hidden(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x2028 || r == 0x2029 || r > 0x9f && unicode.Is(unicode.Cf, r)
}

// Text returns s for a terminal: every hidden character Go-quoted, as are
// bytes that are not UTF-8.
func Text(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case hidden(r): // never printable, so strconv escapes it
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// JSON returns JSON text with every hidden character that it holds raw
// written as a JSON escape. Raw, these can only stand in strings (JSON
// allows no others outside them), so the text keeps its meaning.
// Bytes that are not UTF-8 become U+FFFD.
func JSON(b []byte) []byte {
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, `\ufffd`...)
		case r >= 0x7f && hidden(r) && r <= 0xffff:
			out = fmt.Appendf(out, `\u%04x`, r)
		case r >= 0x7f && hidden(r):
			hi, lo := utf16.EncodeRune(r)
			out = fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		default:
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}
