package rpc

// The server's layers of a listing at 1,000 sessions beside what they
// replace: the hand-written answer encoder against encoding/json of the wire
// types, and its cache of each session's JSON (what a server answering
// listings of unchanged sessions has) against encoding afresh. BENCHMARKS.md's "Layers" table reads it.

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

func BenchmarkLayers(b *testing.B) {
	const n = 1000
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	sample := sampleSessions()[0]
	ss := make([]sessionlocks.Session, n)
	for i := range ss {
		id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		ss[i] = sessionlocks.Session{ID: id, Dir: "/home/dev/.copilot/session-state/" + id, Name: fmt.Sprintf("fix: the flaky test (%d)", i),
			CWD: "/home/dev/src/project", ClientName: "copilot-cli", CreatedAt: t0.Add(-time.Duration(i) * time.Minute),
			UpdatedAt: t0.Add(-time.Duration(i) * time.Minute), State: sessionlocks.StateFree}
		if i%10 == 0 { // one session in ten locked, as in the bench's state dirs
			ss[i].State, ss[i].Holders = sample.State, sample.Holders
		}
	}
	b.Run("encode=json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&ListSessionsResult{StateDir: "/s", Total: n, Sessions: wireSessions(ss)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode=hand-fresh", func(b *testing.B) {
		b.ReportAllocs()
		var out []byte
		for b.Loop() {
			var c sessionJSON // nothing encoded before
			var err error
			if out, err = c.appendList(out[:0], "/s", n, ss, true, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode=hand", func(b *testing.B) {
		var c sessionJSON
		out, _ := c.appendList(nil, "/s", n, ss, true, nil)
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if out, err = c.appendList(out[:0], "/s", n, ss, true, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
