//go:build darwin || windows

package procfiles

// Openers against real processes, this test's and children of its own: on
// the macOS and Windows CI jobs (macos-latest, windows-latest), and under
// Wine, where it must refuse. Each system gives fileID (the identity the
// engine reads), startOf (the start time the engine reads) and refusedHere.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestOpenersSelf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inuse.1.hold")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	procs, unseen, err := Openers(context.Background(), path, fileID(t, path))
	if refusedHere(t, procs, err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("openers %v, %d processes unseen", procs, unseen)
	want := startOf(t, os.Getpid())
	if len(procs) != 1 || procs[0].PID != os.Getpid() || !procs[0].Start.Equal(want) {
		t.Fatalf("Openers = %v, want only this process (pid %d, started %s)", procs, os.Getpid(), want)
	}
}

// TestOpenersChild: a child that holds the file is the one opener (this
// process closed its own), with the start time the engine reads for it;
// once it exits nobody has the file open.
func TestOpenersChild(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inuse.2.hold")
	if err := os.WriteFile(path, []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := fileID(t, path)
	before := time.Now()
	cmd, release := holdOpen(t, path)
	procs, _, err := Openers(context.Background(), path, id)
	if refusedHere(t, procs, err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	want := startOf(t, cmd.Process.Pid)
	if len(procs) != 1 || procs[0].PID != cmd.Process.Pid || !procs[0].Start.Equal(want) {
		t.Fatalf("Openers = %v, want only the child (pid %d, started %s)", procs, cmd.Process.Pid, want)
	}
	if d := want.Sub(before); d < -time.Second || d > time.Minute {
		t.Errorf("the child started at %s, %v after the test asked for it", want, d)
	}
	release()
	procs, _, err = Openers(context.Background(), path, id)
	if err != nil || len(procs) != 0 {
		t.Fatalf("after the child exited: Openers = %v, %v; want nobody", procs, err)
	}
}

// TestOpenersChanged: a path that names another file than the one asked
// about is an error, whoever has either open.
func TestOpenersChanged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "inuse.3.hold")
	os.WriteFile(path, nil, 0o644)
	id := fileID(t, path)
	os.WriteFile(filepath.Join(dir, "new"), nil, 0o644)
	if err := os.Rename(filepath.Join(dir, "new"), path); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Openers(context.Background(), path, id); !errors.Is(err, ErrChanged) {
		t.Errorf("Openers of a replaced file: %v, want ErrChanged", err)
	}
}
