package watch

// The state dir missing at start, created, removed, moved aside and
// replaced, or reached through a symlink that is retargeted.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/copilot-ide/sessionlocks/internal/wine"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

func TestStateDirCreatedAfterStart(t *testing.T) {
	wine.Skip(t, wine.DeleteWhileOpen) // the removed session dir stays: the state dir cannot be removed
	modes(t, func(t *testing.T, m Mode) {
		home := t.TempDir()
		dir := filepath.Join(home, ".copilot", "session-state")
		f := start(t, dir, fixtureOpts{mode: m})
		if st := f.w.Stats(); st.Dirs != 0 {
			t.Errorf("Stats = %+v, want no directory watched", st)
		}

		// The CLI creates the whole chain at once on first use.
		id := sessionID(5)
		c := startCLI(t, dir, id)
		f.rec.waitState(t, id, sessionlocks.StateInUse)
		c.cmd.Process.Kill()
		c.cmd.Wait()
		f.rec.waitState(t, id, sessionlocks.StateStale)

		// Removing the state dir removes its sessions; creating it again
		// is seen again.
		if err := os.RemoveAll(filepath.Join(home, ".copilot")); err != nil {
			t.Fatal(err)
		}
		f.rec.waitRemoved(t, id)
		id2 := sessionID(6)
		mkSession(t, dir, id2, "second life")
		f.rec.waitSession(t, id2, "named", func(s sessionlocks.Session) bool { return s.Name == "second life" })
	})
}

// A restore or sync tool moves the state dir aside and renames a copy in,
// or the symlink the state dir is reached through is pointed at another
// directory. The watches on the old directories must not stand for the new
// ones: a lock written in the new state dir is pushed.
func TestStateDirReplaced(t *testing.T) {
	for _, how := range []string{"moved aside", "symlink retargeted"} {
		t.Run(strings.ReplaceAll(how, " ", "-"), func(t *testing.T) {
			modes(t, func(t *testing.T, m Mode) {
				root := t.TempDir()
				sd, first, second := filepath.Join(root, "session-state"), filepath.Join(root, "first"), filepath.Join(root, "second")
				id := sessionID(0x60)
				if how == "moved aside" {
					mkSession(t, sd, id, "original")
				} else {
					mkSession(t, first, id, "original")
					if err := os.Symlink(first, sd); err != nil {
						t.Skipf("cannot make a symlink here: %v", err)
					}
					if _, err := os.Stat(filepath.Join(sd, id)); err != nil {
						t.Skipf("a symlink made here does not lead anywhere: %v", err)
					}
				}
				f := start(t, sd, fixtureOpts{mode: m})
				mkSession(t, second, id, "copy")
				if how == "moved aside" {
					if err := os.Rename(sd, filepath.Join(root, "aside")); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(second, sd); err != nil {
						t.Fatal(err)
					}
				} else if err := os.Symlink(second, sd+".new"); err != nil {
					t.Fatal(err)
				} else if err := os.Rename(sd+".new", sd); err != nil {
					t.Fatal(err)
				}
				// Pushed once the new state dir is read, which comes after its
				// watches are in place.
				f.rec.waitSession(t, id, "read from the new state dir", func(s sessionlocks.Session) bool { return s.Name == "copy" })
				pid := strconv.Itoa(os.Getpid())
				os.WriteFile(filepath.Join(sd, id, "inuse."+pid+".lock"), []byte(pid+"\n"), 0o644)
				f.rec.waitSession(t, id, "locked in the new state dir", func(s sessionlocks.Session) bool { return len(s.Holders) == 1 })
				if m == ModeNotify {
					f.waitStats(t, "the new state dir and its session watched", func(s Stats) bool { return s.Dirs == 2 })
				}
			})
		})
	}
}
