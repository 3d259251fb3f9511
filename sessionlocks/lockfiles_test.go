package sessionlocks

// Tests of lockfiles.go: names kept as (pid, kind) and holders made from
// them.

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/wine"
)

func TestLockFileNames(t *testing.T) {
	for _, name := range []string{"inuse.1.lock", "inuse.1.hold", "inuse.2147483647.lock", "inuse.40213.hold"} {
		t.Run(name, func(t *testing.T) {
			f, ok := lockFileOf(name)
			if !ok || f.name() != name {
				t.Errorf("lockFileOf(%q) = %+v, %v; name() %q", name, f, ok, f.name())
			}
		})
	}
	// Names the engine never deletes are never made into lockFiles, so a
	// lockFile's name is always the one the listing found.
	for _, name := range []string{"inuse.01.lock", "inuse.+1.lock", "inuse.2147483648.lock", "inuse.1.lock~", "inuse.0.hold", "inuse..lock"} {
		t.Run(name, func(t *testing.T) {
			if f, ok := lockFileOf(name); ok {
				t.Errorf("lockFileOf(%q) = %+v, want not an inuse name", name, f)
			}
		})
	}
}

func TestLockRefs(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	old := time.Now().Add(-time.Hour)
	writeLock(t, dir, 30, old)
	writeLock(t, dir, 7, old)
	os.WriteFile(filepath.Join(dir, holdFileName(7)), nil, 0o644)
	os.WriteFile(filepath.Join(dir, holdFileName(12)), nil, 0o644) // an orphan .hold
	os.Mkdir(filepath.Join(dir, holdFileName(30)), 0o755)          // not a file: ignored beside its .lock
	os.Mkdir(filepath.Join(dir, holdFileName(44)), 0o755)          // not a file and alone: no holder
	holders := 4
	if os.Symlink(os.Args[0], filepath.Join(dir, holdFileName(55))) == nil && !wine.Running() { // nor a symlink (Wine's makes none)
		holders++
	}

	r := newDirReader(sd)
	defer r.close()
	got, err := r.read(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(got.files, func(a, b lockFile) int {
		if a.pid != b.pid {
			return int(a.pid - b.pid)
		}
		return b2i(a.hold) - b2i(b.hold)
	}) || countHolders(got.files) != holders {
		t.Fatalf("files %+v: want sorted, %d holders", got.files, holders)
	}
	e := New(Options{StateDir: sd, Logger: quiet})
	refs := e.lockRefs("s", dir, got.files)
	type want struct {
		pid        int
		lock, hold bool
	}
	var have []want
	for _, r := range refs {
		have = append(have, want{r.pid, r.lock.exists(), r.hold.exists()})
	}
	if w := []want{{7, true, true}, {12, false, true}, {30, true, false}}; !slices.Equal(have, w) {
		t.Errorf("holders %+v, want %+v", have, w)
	}
	os.Remove(filepath.Join(dir, lockFileName(30)))
	if refs := e.lockRefs("s", dir, got.files); len(refs) != 2 {
		t.Errorf("a holder whose files have gone since the listing is still made: %+v", refs)
	}
}
