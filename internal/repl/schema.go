package repl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The REPL learns the server's methods from rpc.discover, an OpenRPC 1.x
// document, so that completion and .help never drift from the server.

type openRPC struct {
	Methods    []method `json:"methods"`
	Components struct {
		Schemas map[string]*schema `json:"schemas"`
	} `json:"components"`
}

type method struct {
	Name        string               `json:"name"`
	Summary     string               `json:"summary"`
	Description string               `json:"description"`
	Params      []*contentDescriptor `json:"params"`
	Result      *contentDescriptor   `json:"result"`
	// The document lists notifications among its methods, marked with
	// x-notification (true, or a direction such as "server-to-client") and
	// x-sender ("server" or "client").
	XNotification json.RawMessage `json:"x-notification"`
	XSender       string          `json:"x-sender"`
}

// Who sends a notification.
const (
	fromServer = "server"
	fromClient = "client"
)

// notification says who sends m when it is a notification, else "".
func (m *method) notification() string {
	var flag bool
	var dir string
	json.Unmarshal(m.XNotification, &flag)
	json.Unmarshal(m.XNotification, &dir)
	switch {
	case m.XSender == fromServer || m.XSender == fromClient:
		if flag || dir != "" {
			return m.XSender
		}
	case strings.HasPrefix(dir, "client"):
		return fromClient
	case strings.HasPrefix(dir, "server") || flag:
		return fromServer
	}
	return ""
}

// callable says whether the REPL may send it: a method, or a notification
// the client sends.
func (m *method) callable() bool { return m.notification() != fromServer }

type contentDescriptor struct {
	Name        string  `json:"name"`
	Summary     string  `json:"summary"`
	Description string  `json:"description"`
	Required    bool    `json:"required"`
	Schema      *schema `json:"schema"`
}

type schema struct {
	Ref         string          `json:"$ref"`
	Type        json.RawMessage `json:"type"` // a string or an array of strings
	Description string          `json:"description"`
	Items       *schema         `json:"items"`
	Enum        []any           `json:"enum"`
	Const       any             `json:"const"`
	Default     any             `json:"default"`
	OneOf       []*schema       `json:"oneOf"`
	AnyOf       []*schema       `json:"anyOf"`
	Required    []string        `json:"required"`
	Properties  properties      `json:"properties"`
}

// UnmarshalJSON also takes the boolean schemas of JSON Schema: true allows
// anything, false nothing.
func (s *schema) UnmarshalJSON(b []byte) error {
	if t := string(bytes.TrimSpace(b)); t == "true" || t == "false" {
		*s = schema{}
		return nil
	}
	type plain schema
	return json.Unmarshal(b, (*plain)(s))
}

// properties keeps the order the document gives, which is the order the
// server's types declare their fields in: the order a person expects.
type properties struct {
	names  []string
	byName map[string]*schema
}

func (p *properties) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	p.byName = map[string]*schema{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		name, _ := t.(string)
		var s schema
		if err := dec.Decode(&s); err != nil {
			return err
		}
		p.names = append(p.names, name)
		p.byName[name] = &s
	}
	return nil
}

// catalog indexes a discovered document.
type catalog struct {
	doc     openRPC
	methods map[string]*method
}

func newCatalog(raw json.RawMessage) (*catalog, error) {
	c := &catalog{methods: map[string]*method{}}
	if err := json.Unmarshal(raw, &c.doc); err != nil {
		return nil, fmt.Errorf("rpc.discover: not an OpenRPC document: %w", err)
	}
	for i := range c.doc.Methods {
		m := &c.doc.Methods[i]
		c.methods[m.Name] = m
	}
	return c, nil
}

// names lists the methods the REPL can send, sorted.
func (c *catalog) names() []string {
	if c == nil {
		return nil
	}
	var n []string
	for name, m := range c.methods {
		if m.callable() {
			n = append(n, name)
		}
	}
	sort.Strings(n)
	return n
}

func (c *catalog) method(name string) *method {
	if c == nil {
		return nil
	}
	return c.methods[name]
}

// resolve follows a local $ref (#/components/schemas/Name).
func (c *catalog) resolve(s *schema) *schema {
	for i := 0; s != nil && s.Ref != "" && i < 8; i++ {
		name := s.Ref[strings.LastIndex(s.Ref, "/")+1:]
		next := c.doc.Components.Schemas[name]
		if next == nil {
			return s
		}
		s = next
	}
	return s
}

// types lists the JSON types a schema allows, after resolving references.
func (c *catalog) types(s *schema) []string {
	s = c.resolve(s)
	if s == nil {
		return nil
	}
	var one string
	if json.Unmarshal(s.Type, &one) == nil && one != "" {
		return []string{one}
	}
	var many []string
	json.Unmarshal(s.Type, &many)
	for _, alt := range append(s.OneOf, s.AnyOf...) {
		many = append(many, c.types(alt)...)
	}
	return many
}

func (c *catalog) isType(s *schema, t string) bool {
	types := c.types(s)
	for _, have := range types {
		if have == t {
			return true
		}
	}
	return false
}

// typeName is a short human spelling of a schema: a referenced type's name,
// "string[]", an enum's values.
func (c *catalog) typeName(s *schema) string {
	if s == nil {
		return "any"
	}
	if strings.HasPrefix(s.Ref, "#") {
		return s.Ref[strings.LastIndex(s.Ref, "/")+1:]
	}
	if s.Ref != "" {
		return s.Ref
	}
	if len(s.Enum) > 0 {
		var alts []string
		for _, e := range s.Enum {
			b, _ := json.Marshal(e)
			alts = append(alts, string(b))
		}
		return strings.Join(alts, "|")
	}
	if alts := append(s.OneOf, s.AnyOf...); len(alts) > 0 {
		var names []string
		for _, a := range alts {
			names = append(names, c.typeName(a))
		}
		return strings.Join(names, " | ")
	}
	types := c.types(s)
	for i, t := range types {
		if t == "array" {
			types[i] = c.typeName(s.Items) + "[]"
		}
	}
	if len(types) == 0 {
		return "any"
	}
	return strings.Join(types, " | ")
}

// signature is "name {param, optional?}".
func (m *method) signature() string {
	var ps []string
	for _, p := range m.Params {
		if p.Required {
			ps = append(ps, p.Name)
		} else {
			ps = append(ps, p.Name+"?")
		}
	}
	return m.Name + " {" + strings.Join(ps, ", ") + "}"
}

func (m *method) param(name string) *contentDescriptor {
	for _, p := range m.Params {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// positional is the parameter a bare argument fills: the first required one,
// else the first.
func (m *method) positional() *contentDescriptor {
	for _, p := range m.Params {
		if p.Required {
			return p
		}
	}
	if len(m.Params) > 0 {
		return m.Params[0]
	}
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// help writes .help for one method: what it does, its params and its result.
func (c *catalog) help(m *method) string {
	var b strings.Builder
	fmt.Fprintln(&b, m.signature())
	for _, d := range []string{m.Summary, m.Description} {
		if d != "" {
			fmt.Fprintln(&b, indent(d, "  "))
		}
	}
	if len(m.Params) == 0 {
		fmt.Fprintln(&b, "params: none")
	} else {
		fmt.Fprintln(&b, "params:")
		rows := [][3]string{}
		for _, p := range m.Params {
			name := p.Name
			if !p.Required {
				name += "?"
			}
			t := c.typeName(p.Schema)
			if s := c.resolve(p.Schema); s != nil && s.Default != nil {
				d, _ := json.Marshal(s.Default)
				t += " = " + string(d)
			}
			desc := firstNonEmpty(p.Description, p.Summary)
			if desc == "" && p.Schema != nil {
				desc = p.Schema.Description
			}
			rows = append(rows, [3]string{name, t, desc})
		}
		writeRows(&b, rows)
	}
	switch m.notification() {
	case fromServer:
		fmt.Fprintln(&b, "a notification the server sends; the REPL prints it as it arrives (.notifications on|off)")
	case fromClient:
		fmt.Fprintln(&b, "a notification: the REPL sends it and expects no reply")
	}
	if m.Result != nil {
		name := c.typeName(m.Result.Schema)
		if r := m.Result.Schema; r != nil && r.Ref != "" && !strings.HasPrefix(r.Ref, "#") && m.Result.Name != "" {
			name = m.Result.Name
		}
		fmt.Fprintf(&b, "result: %s\n", name)
		if s := c.resolve(m.Result.Schema); s != nil && len(s.Properties.names) > 0 {
			rows := [][3]string{}
			for _, name := range s.Properties.names {
				ps := s.Properties.byName[name]
				rows = append(rows, [3]string{name, c.typeName(ps), c.resolve(ps).Description})
			}
			writeRows(&b, rows)
		}
	}
	if m.callable() {
		if p := m.positional(); p != nil {
			fmt.Fprintf(&b, "example: %s %s   (a bare argument fills %s)\n", m.Name, exampleValue(c, p), p.Name)
		}
	}
	return b.String()
}

func exampleValue(c *catalog, p *contentDescriptor) string {
	switch {
	case isSessionParam(p.Name):
		return "<id prefix>"
	case c.isType(p.Schema, "array"):
		return "a,b"
	case c.isType(p.Schema, "boolean"):
		return "true"
	case c.isType(p.Schema, "integer"), c.isType(p.Schema, "number"):
		return "1"
	}
	return "<" + p.Name + ">"
}

func writeRows(b *strings.Builder, rows [][3]string) {
	w0, w1 := 0, 0
	for _, r := range rows {
		w0, w1 = max(w0, len(r[0])), max(w1, len(r[1]))
	}
	for _, r := range rows {
		line := fmt.Sprintf("  %-*s  %-*s  %s", w0, r[0], w1, r[1], r[2])
		fmt.Fprintln(b, strings.TrimRight(line, " "))
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
