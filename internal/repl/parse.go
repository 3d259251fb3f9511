package repl

// An input line is `method`, `method {json}`, `method [json]`, `method arg`
// or `method key=value ...`. Raw JSON is sent exactly as typed, so that the
// server's own validation can be poked at; the other forms are converted
// with the help of the method's schema. Session ids are sent as typed: the
// server resolves a unique prefix, so that the REPL, `call` and the IDE get
// one answer, ambiguity included. `sessionlocks call` parses its arguments
// here too.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/copilot-ide/sessionlocks/internal/editdist"
)

// parser turns input into a method and its params.
type parser struct {
	cat *catalog
	// vars gives the value of $token and $last; nil where there are none.
	vars func(name string) (json.RawMessage, error)
}

// ParseArgs reads method's params from command-line arguments as the REPL
// reads the rest of a line, for rpc.Client.Call: no arguments give nil, no
// params member.
func ParseArgs(method string, args []string) (any, error) {
	if len(args) == 0 {
		return nil, nil
	}
	return parser{cat: protocolCatalog()}.params(method, args)
}

// parse splits a line into method and params; params is nil when the line
// has none, so that the request carries no params member.
func (p parser) parse(line string) (string, json.RawMessage, error) {
	name, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	if i := strings.IndexAny(name, "{["); i > 0 { // listSessions{"limit":1}
		name, rest = name[:i], name[i:]+" "+rest
	}
	args, _, quote := split(rest)
	if quote != 0 {
		return "", nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if len(args) == 0 {
		return name, nil, nil
	}
	params, err := p.params(name, args)
	return name, params, err
}

// rawJSON takes params typed as JSON as they are; invalid JSON's error
// says how else to type them.
func (p parser) rawJSON(name, text string) (json.RawMessage, error) {
	if err := json.Unmarshal([]byte(text), new(any)); err != nil {
		instead := ""
		if m := p.cat.method(name); m != nil && m.positional() == nil {
			instead = "; " + name + " takes no parameters"
		} else if m != nil {
			pos := m.positional()
			ex := p.cat.example(pos)
			instead = fmt.Sprintf("; type %s %s or %s %s=%s", name, ex, name, pos.Name, ex)
		}
		return nil, fmt.Errorf("params are not valid JSON: %v%s", err, instead)
	}
	return json.RawMessage(text), nil
}

// params reads a method's params from arguments in the key=value and bare
// forms (or one argument of JSON), as a JSON object in the order typed.
func (p parser) params(name string, args []string) (json.RawMessage, error) {
	if len(args) == 1 && (strings.HasPrefix(args[0], "{") || strings.HasPrefix(args[0], "[")) {
		return p.rawJSON(name, args[0])
	}
	m := p.cat.method(name)
	var keys []string
	values := map[string]json.RawMessage{}
	var bare []string
	for _, a := range args {
		key, value, ok := strings.Cut(a, "=")
		if !ok || !isIdent(key) {
			if len(bare) == 0 && m != nil && m.positional() != nil {
				keys = append(keys, m.positional().Name) // its place is where it was typed
			}
			bare = append(bare, a)
			continue
		}
		var desc *param
		if m != nil {
			if desc = m.param(key); desc == nil {
				return nil, fmt.Errorf("%s has no parameter %q (it takes %s)", name, key, paramList(m))
			}
		}
		v, err := p.value(desc, value)
		if err != nil {
			return nil, err
		}
		if _, dup := values[key]; !dup {
			keys = append(keys, key)
		}
		values[key] = v
	}
	if len(bare) > 0 {
		if err := p.bare(name, m, bare, values); err != nil {
			return nil, err
		}
	}
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		b = append(append(append(b, kb...), ':'), values[k]...)
	}
	return append(b, '}'), nil
}

// bare fills m's positional parameter with the bare arguments: one, or
// several joined into a list for an array.
func (p parser) bare(name string, m *method, bare []string, values map[string]json.RawMessage) error {
	if m == nil {
		if best := editdist.Closest(name, p.cat.names(), 4); best != "" {
			return fmt.Errorf("unknown method %q (did you mean %s?)", name, best)
		}
		return fmt.Errorf("unknown method %q: use {json} to send it anyway (methods: %s)", name, strings.Join(p.cat.names(), ", "))
	}
	pos := m.positional()
	switch {
	case pos == nil:
		return fmt.Errorf("%s takes no parameters", name)
	case values[pos.Name] != nil:
		return fmt.Errorf("%s given both bare and as %s=", pos.Name, pos.Name)
	case len(bare) > 1 && !p.cat.isType(pos.Schema, "array"):
		return fmt.Errorf("%s takes one bare argument (%s); give the others as key=value (it takes %s)", name, pos.Name, paramList(m))
	}
	v, err := p.value(pos, strings.Join(bare, ","))
	values[pos.Name] = v
	return err
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

// value converts one typed value for parameter desc (nil when the method
// is unknown) to JSON. $token and $last stand for what the last answers
// said. A string parameter takes the text as typed (canResume 5e55 is the
// id "5e55", not 5×10⁵⁵); an array takes a,b,c; anything else is JSON where
// it parses as JSON, so limit=5 is a number and includeFree=false a boolean.
func (p parser) value(desc *param, raw string) (json.RawMessage, error) {
	var s *schema
	if desc != nil {
		s = p.cat.resolve(desc.Schema)
	}
	switch {
	case raw == "$token" || raw == "$last" || strings.HasPrefix(raw, "$last."):
		if p.vars == nil {
			return nil, fmt.Errorf("%s stands for what the REPL's last answer said; here it means nothing", raw)
		}
		return p.vars(raw)
	case s != nil && s.Type == "string":
		return json.Marshal(text(raw))
	case s != nil && s.Type == "array" && !strings.HasPrefix(raw, "["):
		elems := []json.RawMessage{}
		for _, e := range strings.Split(raw, ",") {
			if e = strings.TrimSpace(e); e != "" {
				v, _ := p.value(&param{Schema: s.Items}, e)
				elems = append(elems, v)
			}
		}
		return json.Marshal(elems)
	}
	if !json.Valid([]byte(raw)) {
		return json.Marshal(text(raw))
	}
	var b bytes.Buffer
	json.Compact(&b, []byte(raw))
	return b.Bytes(), nil
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

// isSessionParam says whether a parameter holds session ids, which the REPL
// completes.
func isSessionParam(name string) bool {
	return name == "sessionId" || name == "sessionIds" || name == "ids"
}

func isIdent(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '$' && r != '.' && r != '-'
	}) < 0
}

// split splits s on white space outside quotes, brackets and braces, so
// that ids=["a", "b"] and name="two words" stay one argument each, and says
// how many brackets and braces it leaves open (while any are, the REPL
// reads continuation lines) and which quote, if any.
func split(s string) (args []string, depth int, quote rune) {
	var cur strings.Builder
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case quote == '"' && r == '\\':
			escaped = true
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '{' || r == '[':
			depth++
		case r == '}' || r == ']':
			depth--
		case depth == 0 && unicode.IsSpace(r):
			if cur.Len() > 0 {
				args = append(args, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteRune(r)
	}
	if cur.Len() > 0 {
		args = append(args, cur.String())
	}
	return args, depth, quote
}
