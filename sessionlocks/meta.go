package sessionlocks

// workspace.yaml: what a session's metadata says, read by a reader of the
// flat lines the CLI writes, or by the YAML library for anything else.

import (
	"bytes"
	"slices"
	"time"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v4"
)

// metadata is what workspace.yaml says about a session (YAML 1.2: `yes`
// and `2026-01-01` are strings). 1.0.102 writes name, older CLIs summary,
// git_root, repository and branch.
type metadata struct {
	ID         string `yaml:"id"`
	CWD        string `yaml:"cwd"`
	ClientName string `yaml:"client_name"`
	Name       string `yaml:"name"`
	Summary    string `yaml:"summary"`
	GitRoot    string `yaml:"git_root"`
	Repository string `yaml:"repository"`
	Branch     string `yaml:"branch"`
	CreatedAt  string `yaml:"created_at"`
	UpdatedAt  string `yaml:"updated_at"`

	created, updated time.Time
}

// maxWorkspaceYAML bounds what is read of workspace.yaml (a few hundred bytes).
const maxWorkspaceYAML = 256 << 10

// parseMetadata parses a session's workspace.yaml; a malformed file gives
// an error the caller may log. It keeps no reference to b.
func parseMetadata(b []byte) (metadata, error) {
	m, ok := parseFlat(b)
	if !ok {
		m = metadata{}
		if err := yaml.Unmarshal(b, &m); err != nil {
			return metadata{}, err
		}
	}
	m.created = parseTime(m.CreatedAt)
	m.updated = parseTime(m.UpdatedAt)
	if m.Name == "" {
		m.Name = m.Summary
	}
	return m, nil
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999 -07:00", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// parseFlat reads workspace.yaml as the CLI writes it: one `key: value` a
// line, each value plain, single-quoted, or double-quoted without escapes.
// Hand-written because it halves a cold listing (BenchmarkList); ok is
// false for anything else, which the library then reads. FuzzParseFlat
// holds the two equal.
func parseFlat(b []byte) (m metadata, ok bool) {
	var seen []string
	for line := range bytes.Lines(b) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		k, v, found := bytes.Cut(line, []byte(": "))
		if !found {
			k, found = bytes.CutSuffix(line, []byte(":"))
		}
		key := string(k)
		if !found || !flatKey(k) || slices.Contains(seen, key) {
			return metadata{}, false
		}
		seen = append(seen, key)
		val, ok := flatValue(v)
		if !ok {
			return metadata{}, false
		}
		if f := m.field(key); f != nil {
			*f = val
		}
	}
	return m, true
}

// field is where the value of key goes; nil for a key not kept.
func (m *metadata) field(key string) *string {
	switch key {
	case "id":
		return &m.ID
	case "cwd":
		return &m.CWD
	case "client_name":
		return &m.ClientName
	case "name":
		return &m.Name
	case "summary":
		return &m.Summary
	case "git_root":
		return &m.GitRoot
	case "repository":
		return &m.Repository
	case "branch":
		return &m.Branch
	case "created_at":
		return &m.CreatedAt
	case "updated_at":
		return &m.UpdatedAt
	}
	return nil
}

func flatKey(k []byte) bool {
	return len(k) > 0 && !bytes.ContainsFunc(k, func(c rune) bool { return (c < 'a' || c > 'z') && c != '_' })
}

// flatValue is a scalar as YAML reads it into a string, if it is one of
// the forms parseFlat reads.
func flatValue(v []byte) (string, bool) {
	if !utf8.Valid(v) || bytes.ContainsFunc(v, func(r rune) bool {
		return r < ' ' || r >= 0x7f && r <= 0x9f || r == 0x2028 || r == 0x2029 || r == 0xfeff
	}) {
		return "", false
	}
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		in := v[1 : len(v)-1]
		if bytes.Count(in, []byte("'")) != 2*bytes.Count(in, []byte("''")) {
			return "", false
		}
		return string(bytes.ReplaceAll(in, []byte("''"), []byte("'"))), true
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && !bytes.ContainsAny(v[1:len(v)-1], `"\`) {
		return string(v[1 : len(v)-1]), true
	}
	if len(v) == 0 || bytes.ContainsAny(v[:1], "'\"|>[]{}&*!%@`#,?-:~ ") || bytes.ContainsAny(v, "[]{},") ||
		bytes.Contains(v, []byte(" #")) ||
		bytes.Contains(v, []byte(": ")) || bytes.HasSuffix(v, []byte(":")) || bytes.HasSuffix(v, []byte(" ")) {
		return "", false
	}
	switch string(v) {
	case "null", "Null", "NULL":
		return "", false
	}
	return string(v), true
}
