package sessionlocks

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/wine"
)

func TestVerdicts(t *testing.T) {
	type want struct {
		verdict Verdict
		reason  Reason
		detail  string // a substring the detail must hold
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, stateDir, dir string) want
	}{
		{"live new format", func(t *testing.T, sd, dir string) want {
			startHolder(t, sd, filepath.Base(dir))
			pastSettle(t)
			return want{Live, ReasonHoldLocked, "kernel lock on inuse."}
		}},
		{"live new format, young lock: its process's descriptor shows the flock at once, no probe needed", func(t *testing.T, sd, dir string) want {
			if runtime.GOOS != "linux" {
				t.Skip("needs Linux /proc/<pid>/fdinfo: elsewhere a young .hold is not probed and reads starting")
			}
			startHolder(t, sd, filepath.Base(dir))
			return want{Live, ReasonHoldLocked, "through a descriptor it has open on it"}
		}},
		{"live old format, verified", func(t *testing.T, sd, dir string) want {
			startHolder(t, sd, filepath.Base(dir), "--old")
			pastSettle(t)
			return want{Live, ReasonVerified, "is the Copilot CLI"}
		}},
		{"live old format, starting", func(t *testing.T, sd, dir string) want {
			startHolder(t, sd, filepath.Base(dir), "--old")
			return want{Live, ReasonStarting, "may still be opening"}
		}},
		{"SIGKILLed new format", func(t *testing.T, sd, dir string) want {
			wine.Skip(t, wine.ExitedVisible)
			h := startHolder(t, sd, filepath.Base(dir))
			h.killAndReap()
			pastSettle(t)
			return want{Stale, ReasonHoldReleased, "not running"}
		}},
		{"SIGKILLed new format, young lock: stale at once", func(t *testing.T, sd, dir string) want {
			// No process has the pid here or in any PID namespace this
			// process sees (it sees them all), the state dir is local, and
			// nobody holds the .hold: the CLI is gone, whatever the lock's age.
			wine.Skip(t, wine.ExitedVisible)
			h := startHolder(t, sd, filepath.Base(dir))
			h.killAndReap()
			return want{Stale, ReasonProcessExited, "is not running"}
		}},
		{"SIGKILLed old format", func(t *testing.T, sd, dir string) want {
			wine.Skip(t, wine.ExitedVisible)
			h := startHolder(t, sd, filepath.Base(dir), "--old")
			h.killAndReap()
			pastSettle(t)
			return want{Stale, ReasonProcessExited, "is not running"}
		}},
		{"zombie", func(t *testing.T, sd, dir string) want {
			h := startHolder(t, sd, filepath.Base(dir), "--old")
			h.killNoReap(t)
			pastSettle(t)
			return want{Stale, ReasonProcessExited, exitedUnreaped}
		}},
		{"zombie with hold", func(t *testing.T, sd, dir string) want {
			h := startHolder(t, sd, filepath.Base(dir))
			h.killNoReap(t)
			pastSettle(t)
			return want{Stale, ReasonHoldReleased, exitedUnreaped}
		}},
		{"pid reused by an unrelated process", func(t *testing.T, sd, dir string) want {
			s := startSleeper(t)
			p := readProc(s.Process.Pid)
			writeLock(t, dir, s.Process.Pid, p.start.Add(-3*time.Second))
			if p.start.Add(-3 * time.Second).Before(sinceBoot(t, 0)) {
				t.Skip("machine booted less than 3 s before this test")
			}
			return want{Stale, ReasonPIDReused, "sleeper 600"}
		}},
		{"pid reused, unlocked hold left behind", func(t *testing.T, sd, dir string) want {
			s := startSleeper(t)
			p := readProc(s.Process.Pid)
			old := p.start.Add(-3 * time.Second)
			writeLock(t, dir, s.Process.Pid, old)
			writeHold(t, dir, s.Process.Pid, old)
			return want{Stale, ReasonHoldReleased, "now belongs to sleeper 600"}
		}},
		{"unrelated process older than the lock", func(t *testing.T, sd, dir string) want {
			s := startSleeper(t)
			writeLock(t, dir, s.Process.Pid, time.Time{})
			pastSettle(t)
			return want{Unknown, ReasonUnverified, "does not look like the Copilot CLI"}
		}},
		{"young lock of an unrelated live process", func(t *testing.T, sd, dir string) want {
			s := startSleeper(t)
			writeLock(t, dir, s.Process.Pid, time.Time{})
			return want{Live, ReasonStarting, "may still be opening"}
		}},
		{"dead pid", func(t *testing.T, sd, dir string) want {
			wine.Skip(t, wine.ExitedVisible)
			writeLock(t, dir, deadPID(t), time.Now().Add(-time.Minute))
			return want{Stale, ReasonProcessExited, "is not running"}
		}},
		{"lock older than boot", func(t *testing.T, sd, dir string) want {
			writeLock(t, dir, os.Getpid(), sinceBoot(t, -time.Hour))
			return want{Stale, ReasonPredatesBoot, "before the machine booted"}
		}},
		{"held hold beats a lock older than boot", func(t *testing.T, sd, dir string) want {
			h := startHolder(t, sd, filepath.Base(dir))
			lock := filepath.Join(dir, lockFileName(h.pid))
			old := sinceBoot(t, -time.Hour)
			os.Chtimes(lock, old, old)
			return want{Live, ReasonHoldLocked, "is held"}
		}},
		{"orphan hold, unlocked", func(t *testing.T, sd, dir string) want {
			writeHold(t, dir, deadPID(t), time.Now().Add(-time.Minute))
			return want{Stale, ReasonHoldReleased, "without its .lock"}
		}},
		{"orphan hold, still locked", func(t *testing.T, sd, dir string) want {
			h := startHolder(t, sd, filepath.Base(dir))
			os.Remove(filepath.Join(dir, lockFileName(h.pid)))
			pastSettle(t)
			return want{Live, ReasonHoldLocked, "is missing"}
		}},
		{"FIFO named like a lock", func(t *testing.T, sd, dir string) want {
			mkfifo(t, filepath.Join(dir, "inuse.4242.lock"))
			return want{Unknown, ReasonUnprobeable, "FIFO"}
		}},
		{"symlink named like a lock", func(t *testing.T, sd, dir string) want {
			wine.Skip(t, wine.Symlink)
			target := filepath.Join(t.TempDir(), "elsewhere")
			os.WriteFile(target, []byte("1\n"), 0o644)
			if err := os.Symlink(target, filepath.Join(dir, "inuse.4243.lock")); err != nil {
				if runtime.GOOS == "windows" {
					t.Skipf("needs the right to make symbolic links (Windows: Developer Mode or admin): %v", err)
				}
				t.Fatal(err)
			}
			return want{Unknown, ReasonUnprobeable, "symbolic link"}
		}},
		{"FIFO as the hold", func(t *testing.T, sd, dir string) want {
			pid := deadPID(t)
			writeLock(t, dir, pid, time.Now().Add(-time.Minute))
			mkfifo(t, filepath.Join(dir, holdFileName(pid)))
			return want{Stale, ReasonProcessExited, "is not running"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sd := t.TempDir()
			dir := newSession(t, sd, "0f8fad5b-d9cb-469f-a165-70867728950e")
			w := tt.setup(t, sd, dir)
			e := newEngine(t, sd, settle)
			done := make(chan Session, 1)
			go func() { done <- mustSession(t, e, filepath.Base(dir)) }()
			var s Session
			select {
			case s = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("probe hung")
			}
			if len(s.Holders) != 1 {
				t.Fatalf("got %d holders, want 1: %+v", len(s.Holders), s.Holders)
			}
			h := s.Holders[0]
			if h.Verdict != w.verdict || h.Reason != w.reason {
				t.Errorf("verdict %s/%s, want %s/%s; detail: %s", h.Verdict, h.Reason, w.verdict, w.reason, h.Detail)
			}
			if !strings.Contains(h.Detail, w.detail) {
				t.Errorf("detail %q does not mention %q", h.Detail, w.detail)
			}
			if !strings.HasSuffix(h.Detail, ".") || h.Detail[0] == ' ' {
				t.Errorf("detail is not a sentence: %q", h.Detail)
			}
			wantState := map[Verdict]State{Live: StateInUse, Stale: StateStale, Unknown: StateUnknown}[w.verdict]
			if s.State != wantState {
				t.Errorf("state %s, want %s", s.State, wantState)
			}
			if s.State.CanResume() != (w.verdict == Stale) {
				t.Errorf("CanResume() = %v for %s", s.State.CanResume(), s.State)
			}
		})
	}
}

func TestTwoLiveWritersConflict(t *testing.T) {
	sd := t.TempDir()
	id := "conflict"
	newSession(t, sd, id)
	startHolder(t, sd, id)
	startHolder(t, sd, id, "--no-op-lock")
	s := mustSession(t, newEngine(t, sd, settle), id)
	if s.State != StateInUse || !s.Conflict || len(s.Holders) != 2 {
		t.Fatalf("state %s conflict %v holders %d; want inUse, conflict, 2", s.State, s.Conflict, len(s.Holders))
	}
}

func TestFreeAndGarbageNames(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "garbage")
	junk := []string{"inuse.0.lock", "inuse.01.lock", "inuse.abc.lock", "inuse.99999999999.lock",
		"inuse.2147483648.lock", "inuse.5.lock.bak", "inuse..lock", "inuse.-3.lock", "INUSE.5.LOCK", "inuse.5.hold~"}
	for _, n := range junk {
		os.WriteFile(filepath.Join(dir, n), []byte("5\n"), 0o644)
	}
	e := newEngine(t, sd, settle)
	s := mustSession(t, e, "garbage")
	if s.State != StateFree || len(s.Holders) != 0 {
		t.Fatalf("state %s with %d holders; garbage names must be ignored", s.State, len(s.Holders))
	}
	if s.Name != "Session garbage" || s.CWD != filepath.VolumeName(os.TempDir())+filepath.FromSlash("/home/dev/garbage") || s.ClientName != "cli" {
		t.Errorf("metadata not read: %+v", s)
	}
	if _, err := e.Reclaim(context.Background(), ReclaimOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	for _, n := range junk {
		if !exists(filepath.Join(dir, n)) {
			t.Errorf("reclaim deleted %s", n)
		}
	}
}

func TestParseLockName(t *testing.T) {
	tests := []struct {
		name string
		pid  int
		kind string
		ok   bool
	}{
		{"inuse.1.lock", 1, "lock", true},
		{"inuse.4242.hold", 4242, "hold", true},
		{"inuse.2147483647.lock", 2147483647, "lock", true},
		{"inuse.2147483648.lock", 0, "", false},
		{"inuse.0.lock", 0, "", false},
		{"inuse.007.lock", 0, "", false},
		{"inuse.12.lockx", 0, "", false},
		{"xinuse.12.lock", 0, "", false},
		{"inuse.12.hold/", 0, "", false},
		{"inuse..lock", 0, "", false},
		{"inuse.1a.lock", 0, "", false},
		{"inuse.-1.lock", 0, "", false},
		{"inuse.+1.lock", 0, "", false},
		{"inuse.99999999999.lock", 0, "", false},
		{"inuse.1.Lock", 0, "", false},
		{"inuse.1xlock", 0, "", false},
		{"INUSE.1.lock", 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pid, kind, ok := parseLockName(tt.name)
			if pid != tt.pid || kind != tt.kind || ok != tt.ok {
				t.Errorf("parseLockName(%q) = %d, %q, %v; want %d, %q, %v", tt.name, pid, kind, ok, tt.pid, tt.kind, tt.ok)
			}
		})
	}
}

// FuzzParseLockName holds the hand-written parser to the expression it
// replaced, with the pid range on top.
func FuzzParseLockName(f *testing.F) {
	for _, s := range []string{"inuse.1.lock", "inuse.4242.hold", "inuse.007.lock", "inuse.2147483648.lock", "inuse..hold"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^inuse\.[1-9][0-9]*\.(lock|hold)$`)
	f.Fuzz(func(t *testing.T, name string) {
		pid, kind, ok := parseLockName(name)
		want := re.MatchString(name)
		if want {
			n, err := strconv.ParseInt(name[6:len(name)-5], 10, 64)
			want = err == nil && n >= 1 && n <= maxPID
		}
		if ok != want {
			t.Fatalf("parseLockName(%q) ok = %v, want %v", name, ok, want)
		}
		if ok && (lockFileName(pid) != name && holdFileName(pid) != name || name[len(name)-4:] != kind) {
			t.Fatalf("parseLockName(%q) = %d, %q", name, pid, kind)
		}
	})
}

func TestValidateID(t *testing.T) {
	good := []string{"0f8fad5b-d9cb-469f-a165-70867728950e", "a", "A.b_c-9", strings.Repeat("x", 128)}
	bad := []string{"", ".", "..", ".session-operation-locks", ".x", "../x", "a/b", `a\b`, "/etc", "a b", "é", "x\x00", strings.Repeat("x", 129), "~"}
	for _, id := range good {
		if err := ValidateID(id); err != nil {
			t.Errorf("ValidateID(%q) = %v, want nil", id, err)
		}
	}
	for _, id := range bad {
		err := ValidateID(id)
		if err == nil || !errorsIs(err, ErrInvalidID) {
			t.Errorf("ValidateID(%q) = %v, want ErrInvalidID", id, err)
		}
	}
}

// exitedUnreaped is what a detail says of a process that exited and whose
// pid is still kept: a zombie on Unix, a handle's on Windows.
var exitedUnreaped = map[bool]string{true: "has exited (a handle", false: "zombie"}[runtime.GOOS == "windows"]
