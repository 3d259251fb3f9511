//go:build darwin || windows

package procfiles

// Openers against real processes, this test's and children of its own: on
// the macOS and Windows CI jobs (macos-latest, windows-latest), and under
// Wine, where it must refuse. Each system gives fileID (the identity the
// engine reads), startOf (the start time the engine reads) and refusedHere.
// Other processes may have a new file open for a moment (a virus scanner,
// an indexer): the tests look for the processes they know about, and check
// that those that closed the file are not listed.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
	want := Process{PID: os.Getpid(), Start: startOf(t, os.Getpid())}
	if !listed(procs, want) {
		t.Fatalf("Openers = %v, want this process among them (%v)", procs, want)
	}
}

// listed reports whether procs has p, with its start time, once.
func listed(procs []Process, p Process) bool {
	n := 0
	for _, q := range procs {
		if q.PID == p.PID && q.Start.Equal(p.Start) {
			n++
		}
	}
	return n == 1
}

// unlisted reports whether procs lacks every one of pids.
func unlisted(procs []Process, pids ...int) bool {
	for _, q := range procs {
		if slices.Contains(pids, q.PID) {
			return false
		}
	}
	return true
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
	want := Process{PID: cmd.Process.Pid, Start: startOf(t, cmd.Process.Pid)}
	if !listed(procs, want) || !unlisted(procs, os.Getpid()) {
		t.Fatalf("Openers = %v, want the child (%v) and not this process (pid %d, which closed the file)", procs, want, os.Getpid())
	}
	if d := want.Start.Sub(before); d < -time.Second || d > time.Minute {
		t.Errorf("the child started at %s, %v after the test asked for it", want.Start, d)
	}
	release()
	procs, _, err = Openers(context.Background(), path, id)
	if err != nil || !unlisted(procs, os.Getpid(), cmd.Process.Pid) {
		t.Fatalf("after the child exited: Openers = %v, %v; want neither it nor this process", procs, err)
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
