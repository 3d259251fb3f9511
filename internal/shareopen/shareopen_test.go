package shareopen

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// While the sidecar has a session's files open, the CLI renames workspace.yaml over itself (its atomic write) and
// deletes and renames session directories: none of it may fail because of the sidecar. os.Open, for contrast,
// refuses all of it on Windows.
func TestOthersMayRenameAndDeleteWhatIsOpen(t *testing.T) {
	for _, tt := range []struct {
		name    string
		open    func(string) (*os.File, error)
		refused bool
	}{
		{"shareopen.Open", Open, false},
		{"os.Open", os.Open, runtime.GOOS == "windows"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			dir := filepath.Join(state, "0f8fad5b-d9cb-469f-a165-70867728950e")
			yaml := filepath.Join(dir, "workspace.yaml")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(yaml, []byte("id: x\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error) {
				t.Helper()
				if tt.refused != (err != nil) {
					t.Errorf("%s while %s has it open: %v (refusal expected: %v)", what, tt.name, err, tt.refused)
				}
			}
			hold := func(path string) *os.File {
				t.Helper()
				f, err := tt.open(path)
				if err != nil {
					t.Fatal(err)
				}
				return f
			}

			f := hold(yaml)
			check("renaming workspace.yaml over itself", os.Rename(yaml, yaml))
			f.Close()

			f = hold(dir)
			check("renaming the session directory", os.Rename(dir, dir+".moved"))
			f.Close()
			os.Rename(dir+".moved", dir)

			f = hold(dir)
			check("deleting the session directory", os.RemoveAll(dir))
			f.Close()
			// Once the sidecar lets go, what was deleted is gone (Windows without POSIX delete semantics, and
			// Wine, keep a deleted directory until its last handle closes).
			if _, err := os.Lstat(dir); !tt.refused && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the deleted session directory is still there after %s closed it: %v", tt.name, err)
			}
		})
	}
}

func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.lock")
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("1\n"); err != nil {
		t.Error(err)
	}
	f.Close()
	if _, err := OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("O_EXCL on an existing file: %v, want it to exist", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "1\n" {
		t.Errorf("read back %q %v", b, err)
	}
	if _, err := OpenFile(filepath.Join(dir, "missing"), os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if names, err := d.Readdirnames(-1); err != nil || !slices.Equal(names, []string{"s.lock"}) {
		t.Errorf("the directory lists %v %v", names, err)
	}
}
