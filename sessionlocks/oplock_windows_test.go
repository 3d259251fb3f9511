package sessionlocks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// An id typed with a trailing dot or in other case reaches the session (Windows drops the dot, NTFS ignores case):
// its operation lock must be the file the CLI locks, named after the session directory, or a mutation holding it
// would not keep a CLI from opening the session meanwhile.
func TestOpLockIsTheCLIsFileWhateverTheIDsSpelling(t *testing.T) {
	sd := t.TempDir()
	id := "0f8fad5b-d9cb-469f-a165-70867728950e"
	newSession(t, sd, id)
	e := New(Options{StateDir: sd, Logger: quiet})
	cliFile := filepath.Join(sd, opLockDir, id+".lock")
	for _, typed := range []string{id, id + ".", strings.ToUpper(id), strings.ToUpper(id) + "."} {
		release, err := e.opLock(context.Background(), typed)
		if err != nil {
			t.Fatalf("%s: %v", typed, err)
		}
		if err := cliLocks(cliFile); !errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			t.Errorf("holding the operation lock as %q, the CLI's LockFileEx on %s gave %v, want a lock violation", typed, cliFile, err)
		}
		release()
		ents, _ := os.ReadDir(filepath.Dir(cliFile))
		if names := dirNames(ents); !slices.Equal(names, []string{id + ".lock"}) {
			t.Errorf("after %q the operation locks are %v, want only the CLI's", typed, names)
		}
	}
}

// cliLocks takes the operation lock as the CLI does (Rust: every share mode, LockFileEx over the whole range,
// failing at once) and lets it go.
func cliLocks(path string) error {
	p, _ := windows.UTF16PtrFromString(path)
	h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_ALWAYS, 0, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, ^uint32(0), ^uint32(0), ol); err != nil {
		return err
	}
	return windows.UnlockFileEx(h, 0, ^uint32(0), ^uint32(0), ol)
}

func dirNames(ents []os.DirEntry) []string {
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// A junction or file put where .session-operation-locks belongs is refused, not followed: nothing is created
// outside the state dir.
func TestOpLockDirThatIsNoDirectoryIsRefused(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "s")
	if err := os.WriteFile(filepath.Join(sd, opLockDir), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{StateDir: sd, Logger: quiet}).opLock(context.Background(), "s")
	var fe *FileError
	if !errors.As(err, &fe) || !errors.Is(err, errNotRegular) {
		t.Fatalf("opLock with a file for its directory: %v, want a FileError saying it is no directory", err)
	}
}
