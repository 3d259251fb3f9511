package main

// The garbage collector's target while serve starts.

import (
	"os"
	"runtime/debug"
	"time"
)

// startupGC is the collector's target percentage while the watcher starts
// (at most startupGCFor). At start the heap is a few MiB, so the first
// listing, which the watcher's baseline shares (every session read cold at
// once, then a watch added to each), ran several collections whose assists
// tripled the time to encode its answer. Once the watcher has started the
// default returns, so that memory under load stays as it was.
const (
	startupGC    = 200
	startupGCFor = 3 * time.Second
)

// relaxStartupGC applies startupGC until started is closed or startupGCFor
// has passed, unless GOGC says otherwise.
func relaxStartupGC(started <-chan struct{}) {
	if os.Getenv("GOGC") != "" {
		return
	}
	old := debug.SetGCPercent(startupGC)
	go func() {
		t := time.NewTimer(startupGCFor)
		defer t.Stop()
		select {
		case <-started:
		case <-t.C:
		}
		debug.SetGCPercent(old)
	}()
}
