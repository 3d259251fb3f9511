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
	"strings"
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
	// Each file that may say another system wrote the session: a Windows
	// working directory, or the macOS that events.jsonl names.
	for _, c := range []struct{ leased, yaml, events string }{
		{"workspace.yaml", "id: s\ncwd: C:\\Users\\dev\\proj\n", ""},
		{"workspace.yaml", "id: s\ncwd: C:\\Users\\dev\\proj\n", `{"type":"session.start","data":{}}` + "\n"},
		{"events.jsonl", "id: s\ncwd: /home/dev/proj\n", `{"type":"session.start","data":{}}` + "\n" +
			`{"type":"system.message","data":{"content":"* Operating System: darwin\n"}}` + "\n"},
	} {
		t.Run(c.leased, func(t *testing.T) { unreadableIsUnknown(t, c.leased, c.yaml, c.events) })
	}
}

func unreadableIsUnknown(t *testing.T, leased, yaml, events string) {
	ctx := context.Background()
	sd := t.TempDir()
	dir := filepath.Join(sd, "s")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	for name, text := range map[string]string{"workspace.yaml": yaml, "events.jsonl": events} {
		if text != "" {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			touch(t, filepath.Join(dir, name), old)
		}
	}
	writeLock(t, dir, deadPID(t), old)
	touch(t, dir, old) // past the racy window: the snapshot is reused
	e := New(Options{StateDir: sd, Settle: settle, Logger: quiet, CacheTTL: -1})
	var detail string
	verdict := func() Verdict {
		t.Helper()
		ss, err := e.List(ctx, ListOptions{})
		if err != nil || len(ss) != 1 || len(ss[0].Holders) != 1 {
			t.Fatalf("list: %v %+v", err, ss)
		}
		h := ss[0].Holders[0]
		t.Logf("%s/%s: %s", h.Verdict, h.Reason, h.Detail)
		detail = h.Detail
		return h.Verdict
	}

	cmd := helperCmd("lease", []string{"LEASE_PATH=" + filepath.Join(dir, leased)})
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
		t.Errorf("with %s unreadable, another system's session's lock read %s", leased, v)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if v := verdict(); v != Unknown || strings.Contains(detail, "could not be read") {
		t.Errorf("%s readable again, its directory untouched: the lock reads %s, and it was not read again", leased, v)
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
