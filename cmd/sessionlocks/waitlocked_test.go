package main

// waitLocked: wait until another process holds a file's lock, as the
// engine takes the operation lock (heldElsewhere is per OS); holdLocked:
// have flock(1) hold one.

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// holdLocked has flock(1) hold p's flock for up to secs seconds, as a CLI
// holds its operation lock, and waits until it does. -F: flock(1) becomes
// its sleep(1), so killing it when the test ends leaves nothing holding p.
func holdLocked(t *testing.T, p string, secs int) {
	t.Helper()
	c := exec.Command("flock", "-F", "-x", p, "sleep", strconv.Itoa(secs))
	if err := c.Start(); err != nil {
		t.Skip("needs flock(1):", err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	waitLocked(t, p)
}

// waitLocked waits until someone holds an exclusive lock on p.
func waitLocked(t *testing.T, p string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if f, err := os.Open(p); err == nil {
			held := heldElsewhere(f)
			f.Close()
			if held {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nobody locked %s", p)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
