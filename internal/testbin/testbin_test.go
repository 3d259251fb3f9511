package testbin

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuilds(t *testing.T) {
	dir := t.TempDir()
	bin, err := Sidecar(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "sessionlocks ") {
		t.Fatalf("%s version: %q %v", bin, out, err)
	}
	cli, err := FakeCLI(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(filepath.ToSlash(cli), "/node_modules/@github/copilot-") || filepath.Base(cli) != Exe("copilot") {
		t.Fatalf("fake CLI at %s: not where npm puts the real one", cli)
	}
	if err := exec.Command(cli, "--help").Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("fake CLI does not run: %v", err)
		}
	}
}
