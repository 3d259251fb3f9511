package sessionlocks

// Review: "written on another system" is read from workspace.yaml's cwd
// (Windows) and events.jsonl's system message (every host). The real CLI
// 1.0.102 writes neither until well after its lock: `copilot -p hi` here
// wrote inuse.<pid>.lock at +0 ms, its .hold at +28 ms, workspace.yaml at
// +168 ms and events.jsonl (with the system message) at +400 ms. In that
// window a young lock of a CLI in WSL (seen from Windows) or in a VM or a
// Docker Desktop container (seen from macOS) names a pid that runs nowhere
// on the host, nothing says the session came from elsewhere, and the young
// rule calls it stale at once; under the operation lock (which the guest's
// flock does not take on the host either) the probe finds the .hold free
// and calls it stale too. The host's facts are built here as gather builds
// them, with where-written read as a darwin or windows host reads it (the
// pid evidence is this machine's: a pid that runs nowhere).

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestYoungLockOfASessionNotYetSayingWhereItWasWrittenIsNotStaleOnMacOSOrWindows(t *testing.T) {
	for _, host := range []string{"darwin", "windows"} {
		for _, opLocked := range []bool{false, true} {
			sd := t.TempDir()
			dir := filepath.Join(sd, "s")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			// The session 30 ms after the CLI locked it: lock and .hold only.
			pid := deadPID(t)
			writeLock(t, dir, pid, time.Time{})
			writeHold(t, dir, pid, time.Time{})
			e := newEngine(t, sd, 5*time.Second)
			w := readWrittenOn(dir, "", host, nil)
			r := refsOf(t, e, "s")[0]
			o := judgeOpts{began: time.Now(), decision: true, opLocked: opLocked, otherOS: w.otherOS, unsure: w.unsure}
			var f facts
			e.gather(r, &o, &f)
			if v, why := decide(&f); v == Stale {
				t.Errorf("%s host, operation lock held: %v: a young lock whose session does not yet say where it was written reads %s/%s (%s); want live or unknown: a CLI in WSL or a VM looks exactly so",
					host, opLocked, v, why, detail(&f, v, why))
			}
		}
	}
}
