//go:build unix

package sessionlocks

// Test helpers that need Unix calls: file times beyond what os.Chtimes can
// set, FIFOs, and flock(1) holding a file.

import (
	"os/exec"
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

// flockHolder has flock(1) hold path's flock for up to secs seconds, as a
// CLI would hold its .hold, killed when the test ends. -F: flock(1)
// becomes its sleep(1), so nothing else keeps the file open. It does not
// wait for the lock: callers wait as they need.
func flockHolder(t testing.TB, path string, secs int) *exec.Cmd {
	t.Helper()
	c := exec.Command("flock", "-F", "-x", path, "sleep", itoa(secs))
	if err := c.Start(); err != nil {
		t.Skip("flock(1) unavailable:", err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}
