package sessionlocks

// Where a session was written: the system its CLI's first system message
// names, and what that makes of a lock this machine cannot vouch for.

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestOSOfEvents(t *testing.T) {
	start := `{"type":"session.start","data":{"sessionId":"x"}}` + "\n"
	prompt := `{"type":"user.message","data":{"content":"* Operating System: windows"}}` + "\n"
	system := func(os string) string {
		return `{"type":"system.message","data":{"role":"system","content":"<environment_context>\n* Current working directory: /w\n* Operating System: ` + os + `\n* Available tools: git"}}` + "\n"
	}
	for _, c := range []struct{ name, events, want string }{
		{"1.0.102 on Linux", start + prompt + system("linux"), "linux"},
		{"on Windows (Node's name)", start + system("win32"), "windows"},
		{"on macOS", start + system("darwin"), "darwin"},
		{"a prompt names a system, no system message yet", start + prompt, ""},
		{"an unknown name", start + system("plan9"), ""},
		{"nothing", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := osOfEvents([]byte(c.events)); got != c.want {
				t.Errorf("osOfEvents = %q, want %q", got, c.want)
			}
		})
	}
}

func TestLocksOfASessionWrittenOnAnotherSystemAreUnknown(t *testing.T) {
	other := "windows"
	if runtime.GOOS == "windows" {
		other = "linux"
	}
	sd := t.TempDir()
	dir := newSession(t, sd, "s")
	events := `{"type":"session.start","data":{}}` + "\n" + `{"type":"system.message","data":{"content":"* Operating System: ` + other + `\n"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(events), 0o600); err != nil {
		t.Fatal(err)
	}
	old := sinceBoot(t, time.Minute)
	writeLock(t, dir, deadPID(t), old)
	writeHold(t, dir, deadPID(t), old)
	e := newEngine(t, sd, settle)
	s := mustSession(t, e, "s")
	for _, h := range s.Holders {
		if h.Verdict != Unknown {
			t.Errorf("pid %d: %s/%s (%s), want unknown: its writer's pids and locks are not this machine's", h.PID, h.Verdict, h.Reason, h.Detail)
		}
	}
	if s.State != StateUnknown {
		t.Fatalf("state %s", s.State)
	}
	if res, err := e.Reclaim(t.Context(), ReclaimOptions{IDs: []string{"s"}}); err != nil || res.Totals.Reclaimed != 0 {
		t.Fatalf("reclaimed %d (%v): never reclaim what another system's CLI may hold", res.Totals.Reclaimed, err)
	}
}

func TestAPOSIXWorkingDirectoryOnAWindowsHost(t *testing.T) {
	dir := t.TempDir()
	if w := readWrittenOn(dir, "/home/dev/src", "windows", nil); w.otherOS == "" {
		t.Error("a session WSL wrote through /mnt/c read as this machine's")
	}
	if w := readWrittenOn(dir, `C:\Users\dev\src`, "windows", nil); w.otherOS != "" {
		t.Errorf("a Windows working directory read as another system's: %q", w.otherOS)
	}
	if w := readWrittenOn(dir, "/home/dev/src", "linux", nil); w.otherOS != "" {
		t.Errorf("a POSIX working directory on Linux read as another system's: %q", w.otherOS)
	}
}
