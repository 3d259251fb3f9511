package sessionlocks

import (
	"time"

	yaml "go.yaml.in/yaml/v4"
)

// metadata is what workspace.yaml says about a session, read with the YAML
// library (the CLI's own writer is YAML 1.2: `yes` and `2026-01-01` are
// strings, which the string fields keep them as). Keys differ between
// CLI versions: 1.0.102 writes name, older ones summary, git_root,
// repository and branch.
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

// maxWorkspaceYAML bounds what is read of workspace.yaml: the real file is a
// few hundred bytes, and a runaway one must not cost a scan its memory.
const maxWorkspaceYAML = 256 << 10

// parseMetadata parses a session's workspace.yaml, read by the caller. A
// malformed file gives empty metadata and an error the caller may log; the
// session is listed either way. It keeps no reference to b.
func parseMetadata(b []byte) (metadata, error) {
	var m metadata
	if err := yaml.Unmarshal(b, &m); err != nil {
		return metadata{}, err
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
