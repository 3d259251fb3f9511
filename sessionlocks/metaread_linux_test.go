package sessionlocks

// A workspace.yaml that cannot be read for a moment (a write lease, as smbd
// and nfsd take for their clients; out of descriptors) hides the working
// directory that says which system wrote the session: the session's locks
// are unknown meanwhile, and it is read again once it can be.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	// Holds a write lease on $LEASE_PATH until stdin closes.
	helpers["lease"] = func() int {
		f, err := os.OpenFile(os.Getenv("LEASE_PATH"), os.O_WRONLY, 0)
		if err != nil {
			fmt.Println("open:", err)
			return 1
		}
		if _, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_WRLCK); err != nil {
			fmt.Println("lease:", err)
			return 1
		}
		fmt.Println("leased")
		io.Copy(io.Discard, os.Stdin)
		return 0
	}
}

func TestUnreadableMetadataIsUnknownAndReadAgain(t *testing.T) {
	ctx := context.Background()
	sd := t.TempDir()
	dir := filepath.Join(sd, "win")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	yaml := filepath.Join(dir, "workspace.yaml")
	if err := os.WriteFile(yaml, []byte("id: win\ncwd: C:\\Users\\dev\\proj\nname: Windows session\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	writeLock(t, dir, deadPID(t), old)
	touch(t, yaml, old)
	touch(t, dir, old) // past the racy window: the snapshot is reused
	e := New(Options{StateDir: sd, Settle: settle, Logger: quiet, CacheTTL: -1})
	verdict := func() Verdict {
		t.Helper()
		ss, err := e.List(ctx, ListOptions{})
		if err != nil || len(ss) != 1 || len(ss[0].Holders) != 1 {
			t.Fatalf("list: %v %+v", err, ss)
		}
		h := ss[0].Holders[0]
		t.Logf("cwd %q: %s/%s: %s", ss[0].CWD, h.Verdict, h.Reason, h.Detail)
		return h.Verdict
	}

	cmd := helperCmd("lease", []string{"LEASE_PATH=" + yaml})
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "leased\n" {
		stdin.Close()
		cmd.Wait()
		t.Skipf("no lease here: %q", line)
	}
	if v := verdict(); v != Unknown {
		t.Errorf("with workspace.yaml unreadable, a Windows-written session's lock read %s", v)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if v := verdict(); v != Unknown || e.caches.snapshot("win").meta.CWD == "" {
		t.Errorf("workspace.yaml readable again, its directory untouched: the lock reads %s, and it was not read again", v)
	}
}

// TestUnexaminedHolderIsNotReportedRemoved: Force, told to take over a
// holder whose files could not be examined, removes nothing and says so.
func TestUnexaminedHolderIsNotReportedRemoved(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	lock := writeLock(t, dir, 4242, time.Now().Add(-time.Minute))
	e := newEngine(t, sd, settle)
	st := dirStat{fd: -1, dir: dir, err: &os.PathError{Op: "open", Path: dir, Err: unix.EMFILE}}
	r, _ := refAt("s", dir, []lockFile{{pid: 4242}}, 0, st)
	h := e.judge(r, judgeOpts{decision: true})
	rm := openDirStat(dir)
	defer rm.close()
	if err := removeTaken(h, rm); err == nil || !exists(lock) {
		t.Fatalf("removeTaken: %v; the lock exists: %v", err, exists(lock))
	}
}
