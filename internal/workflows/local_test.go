package workflows

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Windows runners check files out with CRLF unless told otherwise, and the tests compare generated files and
// fixtures byte for byte: .gitattributes must ask for LF.
func TestCheckoutKeepsLF(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, ".gitattributes"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^\*\s+text=auto\s+eol=lf\s*$`).Match(data) {
		t.Errorf(".gitattributes has no `* text=auto eol=lf` line:\n%s", data)
	}
}

// The Windows build's tests run on every CI run here, under Wine, not only on GitHub's windows runner.
func TestCIRunsTheWindowsTestsUnderWine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^make test-windows$`).Match(data) {
		t.Error(".ci/run does not run `make test-windows`")
	}
}
