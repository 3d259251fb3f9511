package dropwrite

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// A pipe nobody reads: writes still return at once, the overflow is
// dropped and counted, and once the reader is back the queue comes out
// whole, with a line saying how much was lost.
func TestAReaderThatStopsReading(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := New(w, 4096)
	line := strings.Repeat("x", 99) + "\n"
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100_000 { // 10 MB: the pipe (64 KiB) fills at once
			d.Write([]byte(line))
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Write blocked on a pipe nobody reads")
	}
	if d.Dropped() == 0 {
		t.Fatal("nothing dropped")
	}
	d.Write([]byte("the last line\n"))
	var got bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); io.Copy(&got, r) }()
	d.Close(5 * time.Second)
	w.Close()
	wg.Wait()
	out := got.String()
	told := uint64(0)
	for _, l := range strings.Split(out, "\n") {
		var n uint64
		if _, err := fmt.Sscanf(l, "sessionlocks: %d log lines dropped", &n); err == nil {
			told += n
		}
	}
	if told != d.Dropped() {
		t.Errorf("the output says %d were dropped, %d were", told, d.Dropped())
	}
	if !strings.HasSuffix(out, "the last line\n") {
		t.Errorf("the output does not end with the last line written")
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l != strings.TrimSuffix(line, "\n") && !strings.Contains(l, "dropped") && l != "the last line" {
			t.Fatalf("a write came out torn: %q", l)
		}
	}
}
