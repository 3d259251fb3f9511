//go:build unix

package sessionlocks

// Each performance layer of a listing at the IDE's real size, 1,000
// sessions, beside what it replaces: a layer is kept only where it pays
// here, not only at 10,000. BENCHMARKS.md's "Layers" table reads these.

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func BenchmarkLayers(b *testing.B) {
	const n = 1000
	sd := b.TempDir()
	genStateDir(b, sd, n, true) // names as the real CLI writes them, some quoted
	ctx := context.Background()
	list := func(b *testing.B, e *Engine, before func()) {
		b.Helper()
		e.List(ctx, ListOptions{})
		b.ReportAllocs()
		for b.Loop() {
			if before != nil {
				before()
			}
			if ss, err := e.List(ctx, ListOptions{}); err != nil || len(ss) != n {
				b.Fatalf("%d sessions, %v", len(ss), err)
			}
		}
	}
	// Watched trust: snapshots reused without a stat per session, against
	// the stat-validated cache every unwatched listing uses. The epoch moves
	// before each listing so that the kept listing is not what is measured.
	b.Run("trust=stat", func(b *testing.B) {
		e := New(Options{StateDir: sd, Logger: quiet, CacheTTL: time.Hour})
		list(b, e, nil)
	})
	b.Run("trust=watched", func(b *testing.B) {
		e := New(Options{StateDir: sd, Logger: quiet, CacheTTL: time.Hour})
		e.Caches().SetWatched(true)
		list(b, e, func() { e.Caches().InvalidatePID(-1) })
	})
	// The kept listing: a watched listing with no event since the last one
	// is the last one.
	b.Run("kept=yes", func(b *testing.B) {
		e := New(Options{StateDir: sd, Logger: quiet, CacheTTL: time.Hour})
		e.Caches().SetWatched(true)
		list(b, e, nil)
	})

	var ids []string
	if err := readSessionIDs(sd, func(batch []string) { ids = append(ids, batch...) }); err != nil || len(ids) != n {
		b.Fatalf("%d ids, %v", len(ids), err)
	}
	// Reading the state dir and every session dir (names, workspace.yaml):
	// getdents relative to directory descriptors, against the os package.
	type reader interface {
		read(dir, id string) (sessionDir, error)
		close()
	}
	readAll := func(b *testing.B, newReader func() reader, readIDs func(string, func([]string)) error) {
		b.ReportAllocs()
		for b.Loop() {
			got := 0
			readIDs(sd, func(batch []string) { got += len(batch) })
			r := newReader()
			for _, id := range ids {
				if _, err := r.read(filepath.Join(sd, id), id); err != nil {
					b.Fatal(err)
				}
			}
			r.close()
			if got != n {
				b.Fatalf("%d ids", got)
			}
		}
	}
	b.Run("readdir=native", func(b *testing.B) {
		readAll(b, func() reader { return newDirReader(sd) }, readSessionIDs)
	})
	b.Run("readdir=os", func(b *testing.B) {
		readAll(b, func() reader { return &portableDirReader{} }, readSessionIDsPortable)
	})

	// workspace.yaml: the flat reader (with its fallback) against the YAML
	// library alone.
	metas := make([][]byte, 0, n)
	for _, id := range ids {
		m, err := os.ReadFile(filepath.Join(sd, id, "workspace.yaml"))
		if err != nil {
			b.Fatal(err)
		}
		metas = append(metas, m)
	}
	parseAll := func(b *testing.B, parse func([]byte) (metadata, error)) {
		b.ReportAllocs()
		for b.Loop() {
			for _, m := range metas {
				if _, err := parse(m); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("yaml=flat", func(b *testing.B) { parseAll(b, parseMetadata) })
	b.Run("yaml=library", func(b *testing.B) { parseAll(b, parseYAML) })
}
