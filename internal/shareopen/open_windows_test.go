package shareopen

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// The CLI (Rust std, Node) opens its files with every share mode, and for a rename or a delete with DELETE access:
// meanwhile the sidecar's own open must still succeed, which needs FILE_SHARE_DELETE on its side too.
func TestOpensWhatTheCLIHasOpenForDeletion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "workspace.yaml")
	if err := os.WriteFile(path, []byte("id: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, _ := windows.UTF16PtrFromString(path)
	h, err := windows.CreateFile(p, windows.DELETE|windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	f, err := Open(path)
	if err != nil {
		t.Fatalf("Open while the CLI has it open for deletion: %v", err)
	}
	f.Close()
	if f, err := os.Open(path); err == nil || !errors.Is(err, windows.ERROR_SHARING_VIOLATION) {
		t.Errorf("os.Open while the CLI has it open for deletion: %v, want a sharing violation (else this test proves nothing)", err)
		if f != nil {
			f.Close()
		}
	}
}

func TestRefusesFlagsItDoesNotImplement(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	for _, flag := range []int{os.O_APPEND, os.O_TRUNC, os.O_SYNC} {
		if f, err := OpenFile(path, os.O_RDWR|os.O_CREATE|flag, 0o644); err == nil {
			f.Close()
			t.Errorf("flag %#x was accepted", flag)
		}
	}
}
