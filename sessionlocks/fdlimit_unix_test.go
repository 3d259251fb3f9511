//go:build unix

package sessionlocks

// A session's lock files that a listing read but then could not lstat (out
// of file descriptors, the directory swapped for a link) are unknown, never
// gone: gone read the session free.

import (
	"os"
	"syscall"
	"testing"
)

func TestUnexaminedLockFilesAreNeverGone(t *testing.T) {
	sd := t.TempDir()
	e := newEngine(t, sd, settle)
	files := []lockFile{{pid: 4242}, {pid: 4242, hold: true}}
	st := dirStat{fd: -1, dir: sd, err: &os.PathError{Op: "open", Path: sd, Err: syscall.EMFILE}}
	r, ok := refAt("s", sd, files, 0, st)
	if !ok {
		t.Fatal("a holder whose files could not be examined was taken for gone")
	}
	if h := e.judge(r, judgeOpts{}); h.Verdict != Unknown || h.Reason != ReasonUnprobeable {
		t.Fatalf("judged %s/%s: %s", h.Verdict, h.Reason, h.Detail)
	}
	st.err = &os.PathError{Op: "open", Path: sd, Err: syscall.ENOENT}
	if _, ok := refAt("s", sd, files, 0, st); ok {
		t.Fatal("a holder whose files are gone was listed")
	}
}
