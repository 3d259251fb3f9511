package wine

// The gaps, shown: each test passes while Wine has its gap, and on Windows
// checks that Windows has not, so that a skip outlives neither.

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// TestPendingDelete: a file deleted while another handle has it open (the
// engine reading a lock's identity as its CLI closes the session) and then
// written again (the CLI opening the session anew).
func TestPendingDelete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inuse.1.lock")
	os.WriteFile(path, []byte("old\n"), 0o644)
	p, _ := windows.UTF16PtrFromString(path)
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	rewrote := os.WriteFile(path, []byte("new\n"), 0o644) == nil
	windows.CloseHandle(h)
	_, err = os.Stat(path)
	lost := rewrote && err != nil
	if lost != Running() {
		t.Fatalf("under Wine %v: re-created %v, then gone %v", Running(), rewrote, err != nil)
	}
	t.Logf("re-created %v, then gone %v", rewrote, err != nil)
}
