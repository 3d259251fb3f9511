package watch

// The real inotify watch limit, inside a user namespace of its own.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// A real inotify watch limit, without touching the machine's: inside a new
// user namespace /proc/sys/user/max_inotify_watches is that namespace's own
// limit, and lowering it makes inotify_add_watch fail with ENOSPC there.
func TestRealWatchLimit(t *testing.T) {
	if os.Getenv(nsChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRealWatchLimit$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), nsChildEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Skipf("cannot start a process in a new user namespace: %v", err)
		}
		t.Logf("in a user namespace:\n%s", out)
		if err != nil {
			t.Fatalf("the test failed inside the user namespace: %v", err)
		}
		return
	}
	const limitFile = "/proc/sys/user/max_inotify_watches"
	for _, limit := range []int{
		0, // not even the state dir
		3, // the state dir and two sessions of six
	} {
		t.Run("limit="+strconv.Itoa(limit), func(t *testing.T) {
			if err := os.WriteFile(limitFile, []byte(strconv.Itoa(limit)), 0o644); err != nil {
				t.Skipf("cannot set this namespace's inotify limit: %v", err)
			}
			dir := t.TempDir()
			for i := range 6 {
				mkSession(t, dir, sessionID(300+i), "s")
			}
			f := start(t, dir, fixtureOpts{mode: ModeNotify})
			st := f.waitStats(t, "poll mode", func(s Stats) bool { return s.Mode == ModePoll })
			if st.Note == "" {
				t.Errorf("Stats = %+v, want a note saying why", st)
			}
			f.waitStats(t, "every watch given up", func(s Stats) bool { return s.Dirs == 0 })

			pid := strconv.Itoa(os.Getpid())
			id := sessionID(303)
			os.WriteFile(filepath.Join(dir, id, "inuse."+pid+".lock"), []byte(pid+"\n"), 0o644)
			f.rec.waitSession(t, id, "locked", func(s sessionlocks.Session) bool { return len(s.Holders) == 1 })

			added := sessionID(399)
			mkSession(t, dir, added, "added")
			f.rec.waitSession(t, added, "named", func(s sessionlocks.Session) bool { return s.Name == "added" })
			os.RemoveAll(filepath.Join(dir, added))
			f.rec.waitRemoved(t, added)
		})
	}
}
