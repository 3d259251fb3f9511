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

// parser turns input lines into requests. Session ids are sent as typed:
// the server resolves a unique prefix (Engine.ResolveID), so that the REPL,
// `call` and the IDE all get one answer, ambiguity included.
type parser struct {
	cat *catalog
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
		raw, err := p.rawJSON(name, rest)
		return name, raw, err
	}
	args, err := splitArgs(rest)
	if err != nil {
		return "", nil, err
	}
	params, err := p.params(name, args)
	return name, params, err
}

// rawJSON takes params typed as JSON exactly as typed, so that the server's
// own validation can be poked at; invalid JSON's error shows the other forms.
func (p *parser) rawJSON(name, text string) (json.RawMessage, error) {
	if !json.Valid([]byte(text)) {
		var v any
		err := json.Unmarshal([]byte(text), &v)
		return nil, fmt.Errorf("params are not valid JSON: %v%s", err, p.instead(name))
	}
	return json.RawMessage(text), nil
}

// instead says how else params may be typed, for an error's end: "; type
// canResume <id prefix> or canResume sessionId=<id prefix>".
func (p *parser) instead(name string) string {
	m := p.cat.method(name)
	if m == nil {
		return ""
	}
	pos := m.positional()
	if pos == nil {
		return "; " + name + " takes no parameters"
	}
	ex := exampleValue(p.cat, pos)
	return fmt.Sprintf("; type %s %s or %s %s=%s", name, ex, name, pos.Name, ex)
}

// params reads a method's params from arguments in the key=value and bare
// forms (or one argument of JSON), as JSON in the order typed.
func (p *parser) params(name string, args []string) (json.RawMessage, error) {
	if len(args) == 1 && (strings.HasPrefix(args[0], "{") || strings.HasPrefix(args[0], "[")) {
		return p.rawJSON(name, args[0])
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
					return nil, fmt.Errorf("%s has no parameter %q (it takes %s)", name, key, paramList(m))
				}
			}
			v, err := p.value(key, desc, value)
			if err != nil {
				return nil, err
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
				return nil, fmt.Errorf("the server did not describe its methods (rpc.discover), so a bare argument cannot be matched to a parameter: use key=value or {json}")
			}
			return nil, fmt.Errorf("unknown method %q: use {json} to send it anyway (methods: %s)", name, strings.Join(p.cat.names(), ", "))
		}
		pos := m.positional()
		if pos == nil {
			return nil, fmt.Errorf("%s takes no parameters", name)
		}
		if _, dup := params[pos.Name]; dup {
			return nil, fmt.Errorf("%s given both bare and as %s=", pos.Name, pos.Name)
		}
		raw := bare[0]
		if len(bare) > 1 {
			if !p.cat.isType(pos.Schema, "array") {
				return nil, fmt.Errorf("%s takes one bare argument (%s); give the others as key=value (it takes %s)", name, pos.Name, paramList(m))
			}
			raw = strings.Join(bare, ",")
		}
		v, err := p.value(pos.Name, pos, raw)
		if err != nil {
			return nil, err
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
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String()), nil
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
		// Ids are strings whatever they look like (5e55 is no number).
		if isArray {
			return p.list(raw)
		}
		return text(raw), nil
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

// ParseArgs reads method's params from command-line arguments as the REPL
// reads the rest of a line (one JSON argument, key=value, a bare argument),
// doc (the server's OpenRPC document) giving the parameters' types: `sessionlocks
// call` reads its arguments here, so that there is one parser. No arguments
// give nil: no params member.
func ParseArgs(doc []byte, method string, args []string) (json.RawMessage, error) {
	if len(args) == 0 {
		return nil, nil
	}
	cat, err := newCatalog(doc)
	if err != nil {
		return nil, err
	}
	p := parser{cat: cat}
	return p.params(method, args)
}
