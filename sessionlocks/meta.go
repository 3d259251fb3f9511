package sessionlocks

import (
	"io"
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
	f, id, err := openNoFollow(path)
	if err != nil {
		return metadata{}, fileID{}, err
	}
	defer f.Close()
	// One read of the size fstat gave (plus one byte to see EOF) covers the
	// usual case; a file growing meanwhile is read on to the limit.
	b := make([]byte, 0, min(id.size+1, maxWorkspaceYAML))
	b, err = readUpTo(f, b, maxWorkspaceYAML)
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

func readUpTo(r io.Reader, b []byte, limit int64) ([]byte, error) {
	for int64(len(b)) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		want := int(min(int64(cap(b)), limit)) - len(b)
		n, err := r.Read(b[len(b) : len(b)+want])
		b = b[:len(b)+n]
		// A regular file reads short only at its end: no second read to
		// see EOF (one syscall per session on a cold scan).
		if err == io.EOF || n < want {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
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
