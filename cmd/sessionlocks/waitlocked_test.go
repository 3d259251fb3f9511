package main

// waitLocked: wait until another process holds a file's lock, as the
// engine takes the operation lock (heldElsewhere is per OS).

import (
	"os"
	"testing"
	"time"
)

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
