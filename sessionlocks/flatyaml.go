package sessionlocks

import (
	"strconv"
	"strings"
)

// parseFlat reads the workspace.yaml the CLI writes, a flat mapping of plain
// scalars ("key: value" per line), without the general YAML parser, which
// costs a cold scan of 10,000 sessions most of its time and garbage. It
// accepts only what it is sure to read exactly as YAML would (FuzzFlatYAML
// holds it to that) and returns ok=false for anything else (quotes, nesting,
// comments after values, anchors, duplicate keys, ...), so the caller falls
// back to the YAML parser. Values are substrings of the one string made of
// the file: one allocation per file.
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
		val := strings.TrimLeft(rest, " ")
		if !plainSafe(val) || nseen == len(seen) {
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
		default:
			continue
		}
		if len(val) == 0 || !stringScalar(val) {
			return m, false // null, or a bool/number/etc. a string field may refuse
		}
		*dst = val
	}
	return m, true
}

// plainSafe accepts a plain scalar that YAML reads as exactly its text: no
// indicator at the start, no ": " or " #" inside, no trailing blanks, no
// control or non-ASCII bytes (left to the real parser).
func plainSafe(v string) bool {
	if len(v) == 0 {
		return true
	}
	switch v[0] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ', '\t':
		return false
	}
	if last := v[len(v)-1]; last == ' ' || last == '\t' || last == ':' {
		return false
	}
	// One table lookup per byte: a cold scan runs this over every value of
	// 10,000 files.
	for i := 0; i < len(v); i++ {
		switch plainClass[v[i]] {
		case plainOK:
		case plainColon:
			if i+1 < len(v) && (v[i+1] == ' ' || v[i+1] == '\t') {
				return false
			}
		case plainHash:
			if v[i-1] == ' ' || v[i-1] == '\t' {
				return false
			}
		default:
			// Control and non-ASCII bytes, and flow indicators: harmless
			// in block context, but not worth the doubt.
			return false
		}
	}
	return true
}

const (
	plainOK = iota
	plainColon
	plainHash
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
	return t
}()

// yamlNonStrings are the plain scalars YAML resolves to null, a bool or a
// special float, in any case.
var yamlNonStrings = []string{"~", "null", "true", "false", "yes", "no", "on", "off", "y", "n", ".inf", "-.inf", "+.inf", ".nan"}

// stringScalar reports whether YAML resolves a plain scalar to a string or a
// timestamp (which decodes into a string field as written): not null, bool,
// or anything that parses as a number.
func stringScalar(v string) bool {
	if len(v) <= 5 { // the longest of yamlNonStrings; most values are longer
		for _, w := range yamlNonStrings {
			if strings.EqualFold(v, w) {
				return false
			}
		}
	}
	c := v[0]
	if !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
		return true
	}
	// A number has a '-' only first or in an exponent: a UUID or a date,
	// the values that start with digits here, is not one. Deciding that
	// without strconv saves an error value per failed parse.
	for i := 1; i < len(v); i++ {
		if v[i] == '-' && v[i-1] != 'e' && v[i-1] != 'E' {
			return true
		}
	}
	t := strings.ReplaceAll(v, "_", "")
	if _, err := strconv.ParseFloat(t, 64); err == nil {
		return false
	}
	if _, err := strconv.ParseInt(t, 0, 64); err == nil {
		return false
	}
	if _, err := strconv.ParseUint(t, 0, 64); err == nil {
		return false
	}
	return true
}
