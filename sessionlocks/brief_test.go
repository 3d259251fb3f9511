package sessionlocks

import (
	"fmt"
	"testing"
	"time"
)

// A holder judged briefly (beyond the listed ones of a huge session) gets
// the verdict and reason a full judgement gives: the two paths apply one set
// of rules.
func TestBriefJudgementAgrees(t *testing.T) {
	sd := t.TempDir()
	dir := newSession(t, sd, "s")

	for i, w := range []time.Time{
		time.Now().Add(-time.Minute),                  // process-exited
		sinceBoot(t, -time.Hour),                      // predates-boot
		time.Now().Add(time.Hour),                     // dated in the future
		time.Date(1901, 12, 13, 0, 0, 0, 0, time.UTC), // before any CLI
	} {
		pid := deadPID(t) + 100000*(i+1) // distinct, and nobody's
		writeLock(t, dir, pid, w)

	}
	for _, fsType := range []string{"", "nfs"} {
		t.Run(fmt.Sprintf("fs=%q", fsType), func(t *testing.T) {
			e := New(Options{StateDir: sd, Settle: settle, Logger: quiet, FSType: fsType})
			sd, _ := newDirReader(sd).read(dir, "s")
			refs := e.lockRefs("s", dir, sd.files)
			for _, r := range refs {
				full := e.judgeHolder(r, time.Now(), false, e.newSight(), false)
				brief := e.judgeHolder(r, time.Now(), false, e.newSight(), true)
				if brief.Verdict != full.Verdict || brief.Reason != full.Reason {
					t.Errorf("pid %d: brief %s/%s, full %s/%s (%s)", r.pid, brief.Verdict, brief.Reason, full.Verdict, full.Reason, full.Detail)
				}
			}
		})
	}
}
