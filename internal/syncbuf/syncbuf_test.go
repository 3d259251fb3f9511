package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("ab"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); len(got) != 1600 || strings.Count(got, "ab") != 800 {
		t.Fatalf("got %d bytes, %d pairs; want 1600, 800", len(got), strings.Count(got, "ab"))
	}
	if c := b.Bytes(); len(c) != 1600 {
		t.Fatalf("Bytes: %d", len(c))
	}
}
