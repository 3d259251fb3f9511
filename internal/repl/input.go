package repl

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// An input line is `method`, `method {json}`, `method [json]`, `method arg`
// or `method key=value ...`. Raw JSON is sent exactly as typed, so that the
// server's own validation can be poked at; the other forms are converted
// with the help of the method's schema and the session ids last seen.

// depth is how many braces and brackets text leaves open, outside strings:
// while it is above zero, the REPL reads continuation lines.
func depth(text string) int {
	d, inString, escaped := 0, false, false
	for _, r := range text {
		switch {
		case escaped:
			escaped = false
		case inString && r == '\\':
			escaped = true
		case r == '"':
			inString = !inString
		case inString:
		case r == '{' || r == '[':
			d++
		case r == '}' || r == ']':
			d--
		}
	}
	return d
}

// splitArgs splits on white space outside quotes, brackets and braces, so
// that ids=["a", "b"] and name="two words" stay one argument each.
func splitArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	d := 0
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case quote != 0 && r == '\\' && quote == '"':
			escaped = true
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '{' || r == '[':
			d++
		case r == '}' || r == ']':
			d--
		case d == 0 && unicode.IsSpace(r):
			if cur.Len() > 0 {
				args = append(args, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if cur.Len() > 0 {
		args = append(args, cur.String())
	}
	return args, nil
}

// isSessionParam says whether a parameter holds session ids, which the REPL
// completes and expands from prefixes.
func isSessionParam(name string) bool {
	switch name {
	case "sessionId", "sessionIds", "ids":
		return true
	}
	return false
}

// parser turns input lines into requests.
type parser struct {
	cat *catalog
	// ids returns the session ids known to the REPL (from the last
	// listSessions and the notifications since).
	ids func() []string
}

// parse splits a line into method and params; params is nil when the line
// has none, so that the request carries no params member.
func (p *parser) parse(line string) (string, json.RawMessage, error) {
	line = strings.TrimSpace(line)
	name, rest, _ := strings.Cut(line, " ")
	if i := strings.IndexAny(name, "{["); i > 0 { // listSessions{"limit":1}
		name, rest = name[:i], name[i:]+" "+rest
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return name, nil, nil
	}
	if rest[0] == '{' || rest[0] == '[' {
		if !json.Valid([]byte(rest)) {
			var v any
			err := json.Unmarshal([]byte(rest), &v)
			return "", nil, fmt.Errorf("params are not valid JSON: %v", err)
		}
		return name, json.RawMessage(rest), nil
	}
	args, err := splitArgs(rest)
	if err != nil {
		return "", nil, err
	}
	m := p.cat.method(name)
	params := map[string]any{}
	var order []string
	set := func(key string, v any) {
		if _, dup := params[key]; !dup {
			order = append(order, key)
		}
		params[key] = v
	}
	var bare []string
	for _, a := range args {
		key, value, ok := strings.Cut(a, "=")
		if ok && isIdent(key) {
			var desc *contentDescriptor
			if m != nil {
				desc = m.param(key)
				if desc == nil {
					return "", nil, fmt.Errorf("%s has no parameter %q (it takes %s)", name, key, paramList(m))
				}
			}
			v, err := p.value(key, desc, value)
			if err != nil {
				return "", nil, err
			}
			set(key, v)
			continue
		}
		if len(bare) == 0 && m != nil && m.positional() != nil {
			order = append(order, m.positional().Name) // keep the place it was typed in
		}
		bare = append(bare, a)
	}
	if len(bare) > 0 {
		if m == nil {
			if p.cat == nil {
				return "", nil, fmt.Errorf("the server did not describe its methods (rpc.discover), so a bare argument cannot be matched to a parameter: use key=value or {json}")
			}
			return "", nil, fmt.Errorf("unknown method %q: use {json} to send it anyway", name)
		}
		pos := m.positional()
		if pos == nil {
			return "", nil, fmt.Errorf("%s takes no parameters", name)
		}
		if _, dup := params[pos.Name]; dup {
			return "", nil, fmt.Errorf("%s given both bare and as %s=", pos.Name, pos.Name)
		}
		raw := bare[0]
		if len(bare) > 1 {
			if !p.cat.isType(pos.Schema, "array") {
				return "", nil, fmt.Errorf("%s takes one bare argument (%s); give the others as key=value", name, pos.Name)
			}
			raw = strings.Join(bare, ",")
		}
		v, err := p.value(pos.Name, pos, raw)
		if err != nil {
			return "", nil, err
		}
		params[pos.Name] = v // its place in order was kept when it was typed
	}
	// Marshal in the order typed: a map would sort the keys.
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range order {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(params[k])
		if err != nil {
			return "", nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return name, json.RawMessage(b.String()), nil
}

func paramList(m *method) string {
	if len(m.Params) == 0 {
		return "no parameters"
	}
	var names []string
	for _, p := range m.Params {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '$' && r != '.' && r != '-' {
			return false
		}
	}
	return true
}

// value converts one typed value for parameter key (desc nil when the schema
// is unknown). Values parse as JSON where the parameter is not a string, so
// limit=5 is a number and includeFree=false a boolean; a string parameter
// takes the text as typed, so canResume 5e55 is the id "5e55", not 5×10⁵⁵.
func (p *parser) value(key string, desc *contentDescriptor, raw string) (any, error) {
	var s *schema
	if desc != nil {
		s = desc.Schema
	}
	isArray := p.cat.isType(s, "array") || (desc == nil && (key == "sessionIds" || key == "ids"))
	if isSessionParam(key) {
		if isArray {
			elems, err := p.list(raw)
			if err != nil {
				return nil, err
			}
			ids := make([]string, len(elems))
			for i, e := range elems {
				if ids[i], err = p.sessionID(e); err != nil {
					return nil, err
				}
			}
			return ids, nil
		}
		return p.sessionID(text(raw))
	}
	if desc != nil && len(p.cat.types(s)) == 1 && p.cat.isType(s, "string") {
		return text(raw), nil
	}
	if isArray && !strings.HasPrefix(raw, "[") {
		elems, err := p.list(raw)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			out[i] = jsonOrText(e)
		}
		return out, nil
	}
	return jsonOrText(raw), nil
}

// list splits a,b,c (or takes a JSON array) into its elements as text.
func (p *parser) list(raw string) ([]string, error) {
	if strings.HasPrefix(raw, "[") {
		var elems []any
		if err := json.Unmarshal([]byte(raw), &elems); err != nil {
			return nil, fmt.Errorf("%s is not a JSON array: %v", raw, err)
		}
		out := make([]string, len(elems))
		for i, e := range elems {
			if s, ok := e.(string); ok {
				out[i] = s
			} else {
				b, _ := json.Marshal(e)
				out[i] = string(b)
			}
		}
		return out, nil
	}
	var out []string
	for _, e := range strings.Split(raw, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, text(e))
		}
	}
	return out, nil
}

// text unquotes "json" and 'single' quoted strings and leaves the rest.
func text(raw string) string {
	if len(raw) >= 2 && raw[0] == '\'' && raw[len(raw)-1] == '\'' {
		return raw[1 : len(raw)-1]
	}
	var s string
	if strings.HasPrefix(raw, `"`) && json.Unmarshal([]byte(raw), &s) == nil {
		return s
	}
	return raw
}

func jsonOrText(raw string) any {
	if json.Valid([]byte(raw)) {
		return json.RawMessage(raw)
	}
	return text(raw)
}

// sessionID expands a unique prefix of a known session id. An unknown id is
// passed on unchanged: the server, not the REPL's memory, says what exists.
func (p *parser) sessionID(prefix string) (string, error) {
	if prefix == "" || p.ids == nil {
		return prefix, nil
	}
	var matches []string
	for _, id := range p.ids() {
		if id == prefix {
			return id, nil
		}
		if strings.HasPrefix(id, prefix) {
			matches = append(matches, id)
		}
	}
	switch len(matches) {
	case 0:
		return prefix, nil
	case 1:
		return matches[0], nil
	}
	shown := matches
	if len(shown) > 5 {
		shown = shown[:5]
	}
	more := ""
	if len(matches) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(matches)-len(shown))
	}
	return "", fmt.Errorf("session id prefix %q is ambiguous: it matches %s%s; type more of it", prefix, strings.Join(shown, ", "), more)
}
