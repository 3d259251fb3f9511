package sessionlocks

import (
	"time"

	yaml "go.yaml.in/yaml/v4"
)

// metadata is what workspace.yaml says about a session. Keys differ between
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

// readMetadata parses a session's workspace.yaml. A missing, non-regular or
// malformed file gives empty metadata and an error the caller may log; the
// session is listed either way.
func readMetadata(path string) (metadata, fileID, error) {
	b, id, err := readRegular(path, maxWorkspaceYAML)
	if err != nil {
		return metadata{}, id, err
	}
	m, ok := parseFlat(b)
	if !ok {
		m = metadata{}
		if err := yaml.Unmarshal(b, &m); err != nil {
			return metadata{}, id, err
		}
	}
	m.created = parseTime(m.CreatedAt)
	m.updated = parseTime(m.UpdatedAt)
	if m.Name == "" {
		m.Name = m.Summary
	}
	return m, id, nil
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
