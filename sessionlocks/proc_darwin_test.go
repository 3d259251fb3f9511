package sessionlocks

// readProc and procExe against real processes on macOS (the macos-latest
// CI job).

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestProcExeRelative: a program exec'd by a relative path ("./copilot",
// from its own directory) is named by its absolute path, not by that path
// read against this process's directory.
func TestProcExeRelative(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "copilot")
	copyFile(t, os.Args[0], exe)
	cmd := helperCmd("sleeper", nil)
	cmd.Path, cmd.Args, cmd.Dir = "./copilot", []string{"./copilot"}, dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	want, _ := filepath.EvalSymlinks(exe)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := procExe(cmd.Process.Pid)
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("procExe = %q, want %q", got, want)
		}
		time.Sleep(10 * time.Millisecond) // until the child has exec'd
	}
	if p := readProc(cmd.Process.Pid); p.state != procAlive || !slices.Equal(p.argv, []string{"./copilot"}) {
		t.Errorf("readProc = %+v, want alive with argv [./copilot]", p)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
