package sessionlocks

import (
	"os"
	"path/filepath"
	"testing"
)

// While the engine reads a session's workspace.yaml, the CLI may replace it (its atomic write renames over it)
// and rename or delete the session: the engine's open must refuse none of it (it opens with every share mode).
func TestTheCLIMayRenameAndDeleteWhatTheEngineHasOpen(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "0f8fad5b-d9cb-469f-a165-70867728950e")
	yaml := filepath.Join(dir, "workspace.yaml")
	hold := func() *os.File {
		t.Helper()
		f, _, err := openNoFollow(yaml)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := hold()
	if err := os.Rename(yaml, yaml); err != nil {
		t.Errorf("renaming workspace.yaml over itself while the engine reads it: %v", err)
	}
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Errorf("renaming the session directory while the engine reads its workspace.yaml: %v", err)
	}
	f.Close()
	os.Rename(dir+".moved", dir)
	f = hold()
	if err := os.Remove(yaml); err != nil {
		t.Errorf("deleting workspace.yaml while the engine reads it: %v", err)
	}
	f.Close()
}
