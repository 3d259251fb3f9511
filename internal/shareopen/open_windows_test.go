package shareopen

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/copilot-ide/sessionlocks/internal/wine"
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

// The CLI replaces workspace.yaml by renaming a new file over it. With POSIX semantics (Rust's std::fs::rename on
// Windows 10 1809 and later: FileRenameInfoEx, FILE_RENAME_REPLACE_IF_EXISTS|FILE_RENAME_POSIX_SEMANTICS) that
// succeeds while others have the old file open, as long as they share deletion: with Open, not with os.Open.
func TestPOSIXRenameReplacesWhatIsOpen(t *testing.T) {
	for _, tt := range []struct {
		name    string
		open    func(string) (*os.File, error)
		refused bool
	}{{"shareopen.Open", Open, false}, {"os.Open", os.Open, true}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			yaml, next := filepath.Join(dir, "workspace.yaml"), filepath.Join(dir, "workspace.yaml.tmp")
			os.WriteFile(yaml, []byte("old\n"), 0o600)
			os.WriteFile(next, []byte("new\n"), 0o600)
			f, err := tt.open(yaml)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			err = posixRename(next, yaml)
			if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
				wine.Skip(t, wine.PosixRename) // Wine answers FileRenameInfoEx so; Windows 10 1809 and later do not
			}
			if tt.refused != (err != nil) {
				t.Fatalf("replacing workspace.yaml while %s has it open: %v (refusal expected: %v)", tt.name, err, tt.refused)
			}
			if b, _ := os.ReadFile(yaml); !tt.refused && string(b) != "new\n" {
				t.Errorf("workspace.yaml reads %q after the rename", b)
			}
		})
	}
}

// posixRename renames from over to as Rust's std::fs::rename does on Windows 10 1809 and later.
func posixRename(from, to string) error {
	p, _ := windows.UTF16PtrFromString(from)
	h, err := windows.CreateFile(p, windows.DELETE|windows.SYNCHRONIZE, share, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	name, _ := windows.UTF16FromString(`\\?\` + to)
	name = name[:len(name)-1] // FileNameLength counts no NUL
	type renameInfo struct {  // FILE_RENAME_INFO, its name following
		Flags          uint32
		RootDirectory  windows.Handle
		FileNameLength uint32
		FileName       [1]uint16
	}
	buf := make([]byte, int(unsafe.Offsetof(renameInfo{}.FileName))+2*len(name)+2)
	ri := (*renameInfo)(unsafe.Pointer(&buf[0]))
	ri.Flags = windows.FILE_RENAME_REPLACE_IF_EXISTS | windows.FILE_RENAME_POSIX_SEMANTICS
	ri.FileNameLength = uint32(2 * len(name))
	copy(unsafe.Slice(&ri.FileName[0], len(name)), name)
	return windows.SetFileInformationByHandle(h, windows.FileRenameInfoEx, &buf[0], uint32(len(buf)))
}
