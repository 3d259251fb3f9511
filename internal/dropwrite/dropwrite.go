// Package dropwrite is an io.Writer that never blocks its callers: writes
// are queued, up to a bound, for one goroutine that writes them out; past
// the bound they are dropped and counted. A log whose reader stopped
// reading (an IDE that spawned us with a piped stderr it never drains)
// then costs dropped lines, not a server stuck in a log call.
package dropwrite

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Writer queues writes for w. Each Write is kept whole (slog writes one
// record per Write) or dropped whole.
type Writer struct {
	w   io.Writer
	max int

	mu      sync.Mutex
	queue   [][]byte
	size    int // bytes queued
	closed  bool
	dropped atomic.Uint64
	told    uint64 // drops already reported in the output

	wake chan struct{}
	done chan struct{}
}

// New returns a Writer that queues up to max bytes for w.
func New(w io.Writer, max int) *Writer {
	d := &Writer{w: w, max: max, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go d.run()
	return d
}

// Write queues p, or drops it when the queue is full or the writer is
// closed. It never blocks and never fails.
func (d *Writer) Write(p []byte) (int, error) {
	d.mu.Lock()
	if d.closed || d.size+len(p) > d.max {
		d.mu.Unlock()
		d.dropped.Add(1)
		return len(p), nil
	}
	d.queue = append(d.queue, bytes.Clone(p))
	d.size += len(p)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// Dropped is how many writes were dropped so far.
func (d *Writer) Dropped() uint64 { return d.dropped.Load() }

func (d *Writer) run() {
	defer close(d.done)
	for {
		d.mu.Lock()
		q, closed := d.queue, d.closed
		d.queue, d.size = nil, 0
		d.mu.Unlock()
		if n := d.dropped.Load(); n > d.told && len(q) > 0 {
			// Said where the gap is, once the reader is back.
			fmt.Fprintf(d.w, "sessionlocks: %d log lines dropped: the log was not being read\n", n-d.told)
			d.told = n
		}
		for _, p := range q {
			d.w.Write(p)
		}
		if closed {
			return
		}
		if len(q) == 0 {
			<-d.wake
		}
	}
}

// Close stops taking writes and waits up to timeout for the queue to be
// written out; a reader that never reads costs the wait, not a hang.
func (d *Writer) Close(timeout time.Duration) {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
	select {
	case <-d.done:
	case <-time.After(timeout):
	}
}
