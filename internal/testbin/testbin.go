// Package testbin builds this module's programs for tests that run them as
// real processes: the sidecar and the fake Copilot CLI.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
)

// Module is this module's import path.
const Module = "github.com/copilot-ide/sessionlocks"

// Go is the go command of the toolchain running the tests. `go test` puts
// its GOROOT/bin first on PATH, so "go" finds it; a test binary run by hand
// falls back to its own GOROOT.
func Go() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// Exe is name with the executable suffix of this system.
func Exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// ProgramsEnv names a directory of this module's programs prebuilt for the
// system the tests run on (sessionlocks.exe, copilot.exe), which Build copies
// instead of building: under Wine (`make test-windows`) no go command builds
// for Windows.
const ProgramsEnv = "SESSIONLOCKS_TEST_PROGRAMS"

// Build builds the package at pkg (an import path below Module, such as
// "cmd/sessionlocks") into the executable file out, or copies it from
// $SESSIONLOCKS_TEST_PROGRAMS.
func Build(out, pkg string) error {
	if dir := os.Getenv(ProgramsEnv); dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, Exe(path.Base(pkg))))
		if err != nil {
			return fmt.Errorf("%s=%s: %w", ProgramsEnv, dir, err)
		}
		return os.WriteFile(out, b, 0o755)
	}
	cmd := exec.Command(Go(), "build", "-o", out, Module+"/"+pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// FakeCLI builds the fake Copilot CLI below dir where npm puts the real
// CLI's native binary (node_modules/@github/copilot-<os>-x64/copilot; npm
// calls Windows win32), so that its argv looks like the real one's and the
// engine recognises it, and returns its path.
func FakeCLI(dir string) (string, error) {
	npmOS := runtime.GOOS
	if npmOS == "windows" {
		npmOS = "win32"
	}
	path := filepath.Join(dir, "node_modules", "@github", "copilot-"+npmOS+"-x64", Exe("copilot"))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, Build(path, "internal/fakecli/copilot")
}

// Sidecar builds the sessionlocks binary into dir and returns its path.
func Sidecar(dir string) (string, error) {
	path := filepath.Join(dir, Exe("sessionlocks"))
	return path, Build(path, "cmd/sessionlocks")
}

// RunWithFakeCLI is a TestMain's body for tests that run the fake CLI: it
// builds it into a temporary directory, sets *path, runs m, removes the
// directory and returns m's exit code (1 if the build failed).
func RunWithFakeCLI(m interface{ Run() int }, path *string) int {
	dir, err := os.MkdirTemp("", "sessionlocks-fakecli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *path, err = FakeCLI(dir); err != nil {
		fmt.Fprintln(os.Stderr, "building the fake CLI:", err)
		return 1
	}
	return m.Run()
}
