//go:build unix

package procfiles

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestDevName finds /dev/null by its device number, as Terminal finds a
// terminal; a number no device has is an error, not a name.
func TestDevName(t *testing.T) {
	var st syscall.Stat_t
	if err := syscall.Stat("/dev/null", &st); err != nil {
		t.Skip(err)
	}
	name, err := devName("/dev", uint64(st.Rdev))
	if err != nil || filepath.Join("/dev", name) != "/dev/null" {
		// Another name for the same device would do as well.
		var st2 syscall.Stat_t
		if err != nil || syscall.Stat(filepath.Join("/dev", name), &st2) != nil || st2.Rdev != st.Rdev {
			t.Fatalf("devName(/dev, null's rdev) = %q, %v", name, err)
		}
	}
	if name, err := devName("/dev", 0xfffffffe); err == nil {
		t.Errorf("devName of a number no device has = %q", name)
	}
	// A regular file is never taken for a device, whatever its numbers.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ttys004"), nil, 0o644)
	if name, err := devName(dir, 0); err == nil {
		t.Errorf("devName found %q in a directory of regular files", name)
	}
}
