package sessionlocks

import (
	"strings"
	"unicode/utf8"
)

// parseFlat reads the workspace.yaml the CLI writes, a flat mapping of one
// scalar per line ("key: value", the value plain, 'single-quoted' or
// "double-quoted", perhaps followed by a comment), without the general YAML
// parser, which costs a cold scan of 10,000 sessions most of its time and
// garbage. It accepts only what it is sure to read exactly as YAML would
// (FuzzFlatYAML holds it to that) and returns ok=false for anything else
// (nesting, multi-line scalars, anchors, tags, duplicate keys, ...), so the
// caller falls back to the YAML parser. Plain and unescaped quoted values are
// substrings of the one string made of the file: one allocation per file,
// and one more per value with an escape.
func parseFlat(b []byte) (m metadata, ok bool) {
	text := string(b)
	var seen [16]string
	nseen := 0
	for len(text) > 0 {
		var line string
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, ""
		}
		line = strings.TrimSuffix(line, "\r")
		if len(line) == 0 {
			continue
		}
		if c := line[0]; !('a' <= c && c <= 'z') {
			return m, false // comments, document markers, indentation, sequences
		}
		i := strings.IndexByte(line, ':')
		if i < 0 {
			return m, false
		}
		key := line[:i]
		for j := 0; j < len(key); j++ {
			if k := key[j]; !('a' <= k && k <= 'z' || k == '_' || '0' <= k && k <= '9') {
				return m, false
			}
		}
		rest := line[i+1:]
		if len(rest) > 0 && rest[0] != ' ' {
			return m, false
		}
		if nseen == len(seen) {
			return m, false
		}
		for _, s := range seen[:nseen] {
			if s == key {
				return m, false
			}
		}
		seen[nseen] = key
		nseen++
		var dst *string
		switch key {
		case "id":
			dst = &m.ID
		case "cwd":
			dst = &m.CWD
		case "client_name":
			dst = &m.ClientName
		case "name":
			dst = &m.Name
		case "summary":
			dst = &m.Summary
		case "git_root":
			dst = &m.GitRoot
		case "repository":
			dst = &m.Repository
		case "branch":
			dst = &m.Branch
		case "created_at":
			dst = &m.CreatedAt
		case "updated_at":
			dst = &m.UpdatedAt
		}
		val := strings.TrimLeft(rest, " ")
		var s, tail string
		if len(val) > 0 && (val[0] == '\'' || val[0] == '"') {
			if s, tail, ok = quoted(val, dst != nil); !ok {
				return m, false
			}
		} else {
			end, ok := plainEnd(val)
			if !ok {
				return m, false
			}
			s = strings.TrimRight(val[:end], " \t")
			tail = val[len(s):]
			switch s {
			case "", "~", "null", "Null", "NULL":
				s = "" // null leaves a string field empty
			case "<<":
				return m, false // a merge key
			}
		}
		if !trailOK(tail) {
			return m, false
		}
		if dst != nil {
			// Every other plain scalar, a bool, number or timestamp too
			// (yes, No, on, 12, 2026-01-01), yaml/v4 decodes into a string
			// field as its text.
			*dst = s
		}
	}
	return m, true
}

// plainEnd returns where a plain scalar that YAML reads as exactly its text
// (less trailing blanks) ends: at the end of v or at a " #" comment. It
// refuses an indicator at the start, ": " inside, a ':' last, and control,
// non-ASCII and flow-indicator bytes (left to the real parser).
func plainEnd(v string) (int, bool) {
	if len(v) == 0 {
		return 0, true
	}
	switch v[0] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ', '\t':
		return 0, false
	}
	// One table lookup per byte: a cold scan runs this over every value of
	// 10,000 files.
	for i := 0; i < len(v); i++ {
		switch plainClass[v[i]] {
		case plainOK:
		case plainColon:
			if i+1 == len(v) || v[i+1] == ' ' || v[i+1] == '\t' {
				return 0, false
			}
		case plainHash:
			if v[i-1] == ' ' || v[i-1] == '\t' {
				return i, true
			}
		case plainBlank:
		default:
			// Control and non-ASCII bytes, and flow indicators: harmless
			// in block context, but not worth the doubt.
			return 0, false
		}
	}
	return len(v), true
}

const (
	plainOK = iota
	plainColon
	plainHash
	plainBlank
	plainBad
)

var plainClass = func() (t [256]uint8) {
	for c := range t {
		if c < 0x20 || c >= 0x7f {
			t[c] = plainBad
		}
	}
	for _, c := range ",[]{}" {
		t[c] = plainBad
	}
	t[':'] = plainColon
	t['#'] = plainHash
	t['\t'] = plainBlank
	return t
}()

// trailOK accepts what may follow a scalar on its line: blanks, then
// perhaps a comment (a '#' after a blank) of printable text.
func trailOK(t string) bool {
	i := 0
	for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
		i++
	}
	if i == len(t) {
		return true
	}
	return i > 0 && t[i] == '#' && printable(t[i+1:])
}

// printable accepts text YAML reads as it is within a line: tabs and
// printable ASCII or UTF-8, less the characters YAML 1.1 parsers take for
// line breaks (NEL, LS, PS) and the byte-order mark.
func printable(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r < 0xa0 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff {
			return false // invalid UTF-8 (RuneError is 0xfffd, size 1: caught below), C1 controls, breaks
		}
		if r == utf8.RuneError && n == 1 {
			return false
		}
		i += n
	}
	return true
}

// quoted reads a single- or double-quoted scalar that ends on its line (a
// multi-line one, folded by YAML, is refused) and returns its value (only
// if want: an escaped value costs an allocation) and what follows it.
func quoted(v string, want bool) (s, tail string, ok bool) {
	q := v[0]
	escaped := false
	end := -1
	for i := 1; i < len(v); i++ {
		c := v[i]
		if c == q {
			if q == '\'' && i+1 < len(v) && v[i+1] == '\'' {
				escaped = true
				i++
				continue
			}
			end = i
			break
		}
		if c == '\\' && q == '"' {
			escaped = true
			i++ // the escape's first letter; unescape checks the rest
			if i == len(v) {
				return "", "", false // a line continuation
			}
		}
	}
	if end < 0 {
		return "", "", false
	}
	raw := v[1:end]
	if !printable(raw) {
		return "", "", false
	}
	if !escaped {
		return raw, v[end+1:], true
	}
	if q == '\'' {
		if want {
			s = strings.ReplaceAll(raw, "''", "'")
		}
		return s, v[end+1:], true
	}
	s, ok = unescape(raw, want)
	return s, v[end+1:], ok
}

// unescape decodes a double-quoted scalar's escapes (YAML 1.2, 5.7),
// building the value only if want. An escape YAML does not know, or a code
// point that is no character (a surrogate, beyond U+10FFFF), is refused.
func unescape(raw string, want bool) (string, bool) {
	var b strings.Builder
	if want {
		b.Grow(len(raw))
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			if want {
				b.WriteByte(c)
			}
			continue
		}
		i++
		var r rune
		digits := 0
		switch raw[i] {
		case '0':
			r = 0
		case 'a':
			r = '\a'
		case 'b':
			r = '\b'
		case 't', '\t':
			r = '\t'
		case 'n':
			r = '\n'
		case 'v':
			r = '\v'
		case 'f':
			r = '\f'
		case 'r':
			r = '\r'
		case 'e':
			r = 0x1b
		case ' ', '"', '/', '\\':
			r = rune(raw[i])
		case 'N':
			r = 0x85
		case '_':
			r = 0xa0
		case 'L':
			r = 0x2028
		case 'P':
			r = 0x2029
		case 'x':
			digits = 2
		case 'u':
			digits = 4
		case 'U':
			digits = 8
		default:
			return "", false
		}
		if digits > 0 {
			if i+digits >= len(raw) {
				return "", false
			}
			for _, h := range []byte(raw[i+1 : i+1+digits]) {
				switch {
				case '0' <= h && h <= '9':
					r = r<<4 | rune(h-'0')
				case 'a' <= h && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case 'A' <= h && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return "", false
				}
			}
			if r < 0 || r > utf8.MaxRune || 0xd800 <= r && r <= 0xdfff {
				return "", false
			}
			i += digits
		}
		if want {
			b.WriteRune(r)
		}
	}
	return b.String(), true
}
