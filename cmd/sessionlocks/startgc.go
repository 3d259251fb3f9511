package main

// The garbage collector's target while serve starts.

import (
	"os"
	"runtime/debug"
	"time"
)

// startupGC is the collector's target percentage for the first startupGCFor
// of serve. At start the heap is a few MiB, so the first listing (which the
// watcher's baseline shares: every session read cold at once) would run
// several collections, and their assists tripled the time to encode its
// answer. Afterwards the default returns; the heap is small either way
// (idle RSS with 1,000 sessions is the same, BenchmarkIdleRSS1000).
const (
	startupGC    = 400
	startupGCFor = 3 * time.Second
)

// relaxStartupGC applies startupGC, unless GOGC says otherwise.
func relaxStartupGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	old := debug.SetGCPercent(startupGC)
	time.AfterFunc(startupGCFor, func() { debug.SetGCPercent(old) })
}
