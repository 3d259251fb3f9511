//go:build unix

package sessionlocks

// Every removal is logged at info with session, pid, verdict and reason,
// and a reclaim of many locks writes a bounded number of lines.

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestReclaimLogsBounded(t *testing.T) {
	for _, c := range []struct {
		name                 string
		sessions, locks      int
		wantLines, wantSumms int
	}{
		{"few: a line each", 2, 3, 6, 0},
		{"many: the first 100, then a line a session", 3, 60, maxLoggedRemovals, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			state := t.TempDir()
			for s := range c.sessions {
				dir := newSession(t, state, fmt.Sprintf("s%d", s))
				for i := range c.locks {
					writeLock(t, dir, 2147400000+s*1000+i, sinceBoot(t, time.Minute))
				}
			}
			var logs strings.Builder
			e := New(Options{StateDir: state, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))})
			r, err := e.Reclaim(context.Background(), ReclaimOptions{All: true})
			if err != nil || r.Totals.Reclaimed != c.sessions*c.locks {
				t.Fatalf("reclaimed %d, %v", r.Totals.Reclaimed, err)
			}
			lines, summaries, summed := 0, 0, 0
			for _, l := range strings.Split(logs.String(), "\n") {
				switch {
				case strings.Contains(l, `msg="reclaimed stale lock"`):
					lines++
					for _, k := range []string{"session=s", "pid=21474", "verdict=stale", "reason=process-exited"} {
						if !strings.Contains(l, k) {
							t.Errorf("line lacks %s: %s", k, l)
						}
					}
				case strings.Contains(l, `msg="reclaimed more stale locks"`):
					summaries++
					var n int
					fmt.Sscanf(l[strings.Index(l, "count=")+len("count="):], "%d", &n)
					summed += n
				}
			}
			if lines != c.wantLines || summaries != c.wantSumms || lines+summed != c.sessions*c.locks {
				t.Errorf("%d lines and %d summaries (of %d), want %d and %d:\n%s", lines, summaries, summed, c.wantLines, c.wantSumms, logs.String())
			}
		})
	}
}
