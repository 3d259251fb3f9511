package sessionlocks

import (
	"testing"
)

// The long-path and device forms of a local path (\\?\C:\..., \\.\C:\...) are the local drive, not a network
// share; UNC paths in either form are shares.
func TestFSTypeOfLongPaths(t *testing.T) {
	dir := t.TempDir()
	local, shared, err := fsType(dir)
	if err != nil || shared {
		t.Fatalf("fsType(%s) = %q, %v, %v: want a local drive", dir, local, shared, err)
	}
	for _, p := range []string{`\\?\` + dir, `\\.\` + dir} {
		if name, shared, err := fsType(p); err != nil || shared || name != local {
			t.Errorf("fsType(%s) = %q, %v, %v; want %q, not shared", p, name, shared, err, local)
		}
	}
	for _, p := range []string{`\\server\share\.copilot\session-state`, `\\?\UNC\server\share\.copilot`, `//server/share/x`} {
		if name, shared, err := fsType(p); err != nil || !shared || name != "smb" {
			t.Errorf("fsType(%s) = %q, %v, %v; want an smb share", p, name, shared, err)
		}
	}
}
