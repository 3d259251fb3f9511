package repl

// The protocol as the REPL knows it: the OpenRPC document the server serves
// (schema.OpenRPC, built into the same binary), read for completion, the
// parameters' types and .help.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	protocol "github.com/copilot-ide/sessionlocks/schema"
)

type catalog struct {
	Methods    []*method `json:"methods"`
	Components struct {
		Schemas map[string]*schema `json:"schemas"`
	} `json:"components"`
}

type method struct {
	Name        string   `json:"name"`
	Summary     string   `json:"summary"`
	Description string   `json:"description"`
	Params      []*param `json:"params"`
	Result      *param   `json:"result"`
	// Notifications are listed among the methods, marked with
	// x-notification and x-sender ("server" or "client").
	Notification bool   `json:"x-notification"`
	Sender       string `json:"x-sender"`
}

type param struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Required    bool    `json:"required"`
	Schema      *schema `json:"schema"`
}

type schema struct {
	Ref         string     `json:"$ref"`
	Type        string     `json:"type"`
	Description string     `json:"description"`
	Items       *schema    `json:"items"`
	Enum        []string   `json:"enum"`
	Default     any        `json:"default"`
	Properties  properties `json:"properties"`
}

// UnmarshalJSON takes the boolean schema (true: anything) as an empty one.
func (s *schema) UnmarshalJSON(b []byte) error {
	if string(b) == "true" {
		return nil
	}
	type plain schema
	return json.Unmarshal(b, (*plain)(s))
}

// properties keeps the order the document gives, the order the server's
// types declare their fields in: the order a person expects.
type properties struct {
	names  []string
	byName map[string]*schema
}

func (p *properties) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.Token() // {
	p.byName = map[string]*schema{}
	for dec.More() {
		t, _ := dec.Token()
		var s schema
		if err := dec.Decode(&s); err != nil {
			return err
		}
		p.names = append(p.names, t.(string))
		p.byName[t.(string)] = &s
	}
	return nil
}

// protocolCatalog is the document built into this binary, read once.
var protocolCatalog = sync.OnceValue(func() *catalog {
	var c catalog
	if err := json.Unmarshal(protocol.OpenRPC, &c); err != nil {
		panic("the built-in OpenRPC document: " + err.Error())
	}
	return &c
})

func (c *catalog) method(name string) *method {
	return first(c.Methods, func(m *method) bool { return m.Name == name })
}

// first is the first of xs that f accepts, or the zero value.
func first[T any](xs []T, f func(T) bool) (zero T) {
	if i := slices.IndexFunc(xs, f); i >= 0 {
		return xs[i]
	}
	return zero
}

// names lists what the REPL can send, sorted: methods, and the
// notifications a client sends.
func (c *catalog) names() []string {
	var n []string
	for _, m := range c.Methods {
		if m.Sender != "server" {
			n = append(n, m.Name)
		}
	}
	slices.Sort(n)
	return n
}

// resolve follows a local $ref (#/components/schemas/Name).
func (c *catalog) resolve(s *schema) *schema {
	if s != nil && strings.HasPrefix(s.Ref, "#/components/schemas/") {
		if next := c.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]; next != nil {
			return next
		}
	}
	return s
}

// isType says whether a schema is of JSON type t (false when it is not known).
func (c *catalog) isType(s *schema, t string) bool {
	s = c.resolve(s)
	return s != nil && s.Type == t
}

// typeName is a short spelling of a schema: a referenced type's name,
// "string[]", an enum's values.
func (c *catalog) typeName(s *schema) string {
	switch {
	case s == nil:
		return "any"
	case s.Ref != "":
		return s.Ref[strings.LastIndex(s.Ref, "/")+1:]
	case len(s.Enum) > 0:
		return `"` + strings.Join(s.Enum, `"|"`) + `"`
	case s.Type == "array":
		return c.typeName(s.Items) + "[]"
	case s.Type == "":
		return "any"
	}
	return s.Type
}

func (m *method) param(name string) *param {
	return first(m.Params, func(p *param) bool { return p.Name == name })
}

// positional is the parameter a bare argument fills: the first required one,
// else the first.
func (m *method) positional() *param {
	return cmp.Or(first(m.Params, func(p *param) bool { return p.Required }), first(m.Params, func(*param) bool { return true }))
}

// signature is "name {param, optional?}".
func (m *method) signature() string {
	var ps []string
	for _, p := range m.Params {
		ps = append(ps, p.signature())
	}
	return m.Name + " {" + strings.Join(ps, ", ") + "}"
}

// help is .help METHOD: what it does, its params and its result.
func (c *catalog) help(m *method) string {
	var b strings.Builder
	fmt.Fprintln(&b, m.signature())
	for _, d := range []string{m.Summary, m.Description} {
		if d != "" {
			fmt.Fprintln(&b, "  "+strings.ReplaceAll(strings.TrimRight(d, "\n"), "\n", "\n  "))
		}
	}
	if len(m.Params) == 0 {
		fmt.Fprintln(&b, "params: none")
	} else {
		fmt.Fprintln(&b, "params:")
		var rows [][3]string
		for _, p := range m.Params {
			t := c.typeName(p.Schema)
			if s := c.resolve(p.Schema); s != nil && s.Default != nil {
				d, _ := json.Marshal(s.Default)
				t += " = " + string(d)
			}
			rows = append(rows, [3]string{p.signature(), t, p.Description})
		}
		writeRows(&b, rows)
	}
	switch {
	case m.Notification && m.Sender == "server":
		fmt.Fprintln(&b, "a notification the server sends; the REPL prints it as it arrives (.notifications on|off)")
	case m.Notification:
		fmt.Fprintln(&b, "a notification: the REPL sends it and expects no reply")
	}
	if m.Result != nil {
		fmt.Fprintf(&b, "result: %s\n", m.Result.Name)
		if s := c.resolve(m.Result.Schema); s != nil && len(s.Properties.names) > 0 {
			var rows [][3]string
			for _, name := range s.Properties.names {
				ps := s.Properties.byName[name]
				rows = append(rows, [3]string{name, c.typeName(ps), c.resolve(ps).Description})
			}
			writeRows(&b, rows)
		}
	}
	if p := m.positional(); p != nil && m.Sender != "server" {
		fmt.Fprintf(&b, "example: %s %s   (a bare argument fills %s)\n", m.Name, c.example(p), p.Name)
	}
	return b.String()
}

// signature is "name" or "name?" for an optional parameter.
func (p *param) signature() string {
	if p.Required {
		return p.Name
	}
	return p.Name + "?"
}

func (c *catalog) example(p *param) string {
	switch {
	case isSessionParam(p.Name):
		return "<id prefix>"
	case c.isType(p.Schema, "array"):
		return "a,b"
	case c.isType(p.Schema, "boolean"):
		return "true"
	case c.isType(p.Schema, "integer"):
		return "1"
	}
	return "<" + p.Name + ">"
}

// writeRows prints rows as three aligned columns, two spaces apart.
func writeRows(b *strings.Builder, rows [][3]string) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", r[0], r[1], r[2])
	}
	tw.Flush()
}
