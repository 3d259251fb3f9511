package sessionlocks

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestRealCLIFixture reads the session-state tree recorded from the real
// CLI 1.0.102 (testdata/realcli; internal/realcli checks it still matches
// the recorded layout): a 1.0.102 session left by a SIGKILLed CLI, and an
// older CLI's session with the older workspace.yaml keys.
func TestRealCLIFixture(t *testing.T) {
	sd := t.TempDir()
	src := filepath.Join("..", "testdata", "realcli", "session-state")
	if err := os.CopyFS(sd, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	// A checkout dates every file now; the crash was a while ago.
	crashed := time.Now().Add(-10 * time.Minute)
	if b, _ := bootTime(); crashed.Before(b) {
		crashed = b.Add(time.Second)
	}
	filepath.WalkDir(sd, func(p string, d fs.DirEntry, err error) error {
		return os.Chtimes(p, crashed, crashed)
	})
	ctx := context.Background()
	e := newEngine(t, sd, DefaultSettle)
	ss, err := e.List(ctx, ListOptions{})
	if err != nil || len(ss) != 2 {
		t.Fatalf("List: %v, %d sessions", err, len(ss))
	}
	newer, older := ss[0], ss[1]
	if newer.ID != "0f8fad5b-d9cb-469f-a165-70867728950e" || newer.Name != "placeholder session name" ||
		newer.CWD != "/home/example/project" || newer.ClientName != "github/cli" ||
		!newer.UpdatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 6, 789e6, time.UTC)) {
		t.Errorf("1.0.102 metadata: %+v", newer)
	}
	if runtime.GOOS == "windows" {
		// Its working directory is a POSIX one: seen from Windows, WSL wrote
		// it, and no pid or lock here says whether its CLI still runs.
		if newer.State != StateUnknown {
			t.Fatalf("1.0.102 session (a Linux one) seen from Windows: %s, want unknown", newer.State)
		}
		return
	}
	if newer.State != StateStale || len(newer.Holders) != 1 {
		t.Fatalf("1.0.102 session: %s with %d holders", newer.State, len(newer.Holders))
	}
	if h := newer.Holders[0]; h.PID != 2147483646 || h.Reason != ReasonHoldReleased || h.HoldFile == "" {
		t.Errorf("holder: pid %d %s hold %q: %s", h.PID, h.Reason, h.HoldFile, h.Detail)
	}
	if older.Name != "placeholder summary written by an older CLI" || older.Repository != "example-org/example-repo" ||
		older.Branch != "main" || older.State != StateFree {
		t.Errorf("older CLI's session: %+v", older)
	}
	res, err := e.Reclaim(ctx, ReclaimOptions{All: true})
	if err != nil || len(res.Reclaimed) != 1 {
		t.Fatalf("reclaim: %v %+v", err, res)
	}
	left, _ := os.ReadDir(filepath.Join(sd, newer.ID))
	for _, de := range left {
		if _, _, ok := parseLockName(de.Name()); ok {
			t.Errorf("%s left behind", de.Name())
		}
	}
	if len(left) < 4 {
		t.Errorf("reclaim removed more than the locks: %d entries left", len(left))
	}
}
