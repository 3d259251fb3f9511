package sessionlocks

// Test helpers that differ on Windows: file times through os.Chtimes, and no
// FIFOs in the file system.

import (
	"os"
	"testing"
	"time"
)

// touch sets p's times to w: os.Chtimes, good from 1678 to 2262, the range
// the tests that run here use.
func touch(t testing.TB, p string, w time.Time) {
	t.Helper()
	if err := os.Chtimes(p, w, w); err != nil {
		t.Fatal(err)
	}
}

// mkfifo: Windows's named pipes live outside the file system.
func mkfifo(t testing.TB, p string) {
	t.Skip("needs Unix FIFOs (mkfifo)")
}
