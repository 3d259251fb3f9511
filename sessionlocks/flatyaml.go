package sessionlocks

import (
	"bytes"
	"strconv"
	"strings"
)

// parseFlat reads the workspace.yaml the CLI writes, a flat mapping of plain
// scalars ("key: value" per line), without the general YAML parser, which
// costs a cold scan of 10,000 sessions most of its time and garbage. It
// accepts only what it is sure to read exactly as YAML would (FuzzFlatYAML
// holds it to that) and returns ok=false for anything else (quotes, nesting,
// comments after values, anchors, duplicate keys, ...), so the caller falls
// back to the YAML parser.
func parseFlat(b []byte) (m metadata, ok bool) {
	var seen [16]string
	nseen := 0
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			continue
		}
		c := line[0]
		if !('a' <= c && c <= 'z') {
			return m, false // comments, documents markers, indentation, sequences
		}
		i := bytes.IndexByte(line, ':')
		if i < 0 {
			return m, false
		}
		key := line[:i]
		for _, k := range key {
			if !('a' <= k && k <= 'z' || k == '_' || '0' <= k && k <= '9') {
				return m, false
			}
		}
		rest := line[i+1:]
		if len(rest) > 0 && rest[0] != ' ' {
			return m, false
		}
		val := bytes.TrimLeft(rest, " ")
		if !plainSafe(val) {
			return m, false
		}
		if nseen == len(seen) {
			return m, false
		}
		for _, s := range seen[:nseen] {
			if s == string(key) {
				return m, false
			}
		}
		seen[nseen] = string(key)
		nseen++
		var dst *string
		switch string(key) {
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
		*dst = string(val)
	}
	return m, true
}

// plainSafe accepts a plain scalar that YAML reads as exactly its text: no
// indicator at the start, no ": " or " #" inside, no trailing blanks, no
// control or non-ASCII bytes (left to the real parser).
func plainSafe(v []byte) bool {
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
	for i, c := range v {
		if c < 0x20 || c >= 0x7f {
			return false
		}
		if c == ':' && i+1 < len(v) && (v[i+1] == ' ' || v[i+1] == '\t') {
			return false
		}
		if c == '#' && (v[i-1] == ' ' || v[i-1] == '\t') {
			return false
		}
		if c == ',' || c == '[' || c == ']' || c == '{' || c == '}' {
			return false // harmless in block context, but not worth the doubt
		}
	}
	return true
}

// stringScalar reports whether YAML resolves a plain scalar to a string or a
// timestamp (which decodes into a string field as written): not null, bool,
// or anything that parses as a number.
func stringScalar(v []byte) bool {
	switch string(bytes.ToLower(v)) {
	case "~", "null", "true", "false", "yes", "no", "on", "off", "y", "n", ".inf", "-.inf", "+.inf", ".nan":
		return false
	}
	c := v[0]
	if !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
		return true
	}
	t := strings.ReplaceAll(string(v), "_", "")
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
