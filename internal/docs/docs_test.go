// Package docs checks the project's Markdown: the README stays short enough
// to read at a sitting, and no relative link in it or in docs/ is broken.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const root = "../.."

// maxREADMEWords: a newcomer reads the README to the end; the fine print
// lives in docs/.
const maxREADMEWords = 1500

func TestREADMEIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(string(b))); n >= maxREADMEWords {
		t.Errorf("README.md has %d words, want under %d: move detail to docs/", n, maxREADMEWords)
	}
}

var link = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)

func TestRelativeLinksResolve(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md"), filepath.Join(root, "npm", "sessionlocks", "README.md"))
	for _, f := range files {
		t.Run(strings.TrimPrefix(f, root+"/"), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range link.FindAllStringSubmatch(string(b), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
					t.Errorf("link to %s: %v", target, err)
				}
			}
		})
	}
}
