//go:build unix

package sessionlocks

// Review: the clock-skew measure makes and removes files in
// .session-operation-locks by path, following a link there, while the
// operation lock itself refuses one (oplock_unix.go): a link in its place
// makes a listing create and delete files outside the state dir.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestSkewMeasureNeverWritesThroughALinkedOpLockDir(t *testing.T) {
	sd := t.TempDir()
	outside := t.TempDir() // not below the state dir
	newSession(t, sd, "s")
	// A file named as a measure killed before it cleaned up names it, but
	// outside the state dir: nothing may remove it.
	planted := filepath.Join(outside, fmt.Sprintf("%s%d.%d.%s", clockPrefix, deadPID(t), time.Now().UnixMilli(), "00000000"))
	if err := os.WriteFile(planted, []byte("not the sidecar's"), 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(outside, past, past); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(sd, opLockDir)); err != nil {
		t.Fatal(err)
	}
	live := startHolder(t, sd, "s")
	// Its lock dated before it started: a verdict that depends on the
	// clocks, so the listing measures the skew.
	touch(t, filepath.Join(sd, "s", lockFileName(live.pid)), time.Now().Add(-2*time.Minute))
	if err := os.Chtimes(outside, past, past); err != nil { // the fake CLI took its operation lock there
		t.Fatal(err)
	}
	e := newEngine(t, sd, 50*time.Millisecond)
	if _, err := e.List(context.Background(), ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if !exists(planted) {
		t.Errorf("a listing removed %s, outside the state dir, through the link %s", planted, filepath.Join(sd, opLockDir))
	}
	if fi, err := os.Stat(outside); err != nil || !fi.ModTime().Equal(past) {
		t.Errorf("a listing created or removed files in %s, outside the state dir (its mtime moved from %s)", outside, past)
	}
}
