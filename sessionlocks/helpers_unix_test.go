//go:build unix

package sessionlocks

// Test helpers that need Unix calls: file times beyond what os.Chtimes can
// set, and FIFOs.

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// touch sets p's times to w. os.Chtimes cannot be used: it passes times
// through UnixNano, which wraps beyond 2262 (2300 becomes 1715).
func touch(t testing.TB, p string, w time.Time) {
	t.Helper()
	ts := unix.Timespec{Sec: w.Unix(), Nsec: int64(w.Nanosecond())}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		t.Fatal(err)
	}
}

// mkfifo makes a FIFO, a file no lock file may be.
func mkfifo(t testing.TB, p string) {
	t.Helper()
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
}
