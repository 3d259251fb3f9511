package sessionlocks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file where the state dir, or a directory above it, should be is "not a directory", as on Unix; Windows
// reports both as "path not found" (its ENOTDIR), and the listing said there were no sessions.
func TestStateDirThatIsAFileIsNotMissing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "copilot-home")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sd := range []string{file, filepath.Join(file, "session-state")} {
		e := New(Options{StateDir: sd, Logger: quiet})
		_, err := e.List(context.Background(), ListOptions{})
		if !errors.Is(err, ErrStateDir) || !strings.Contains(err.Error(), "not a directory") || errors.Is(err, os.ErrNotExist) {
			t.Errorf("listing %s: %v, want a state dir error saying it is not a directory", sd, err)
		}
		if e.Status().StateDirExists {
			t.Errorf("%s: the state dir is said to exist", sd)
		}
	}
	// A missing one is still missing: no sessions, no error.
	if ss, err := New(Options{StateDir: filepath.Join(filepath.Dir(file), "missing"), Logger: quiet}).List(context.Background(), ListOptions{}); err != nil || len(ss) != 0 {
		t.Errorf("a missing state dir: %v %v, want no sessions", ss, err)
	}
}
