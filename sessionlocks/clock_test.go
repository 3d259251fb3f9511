// The tests' clock: real time plus the settle windows a test skipped.
package sessionlocks

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// settle is short in tests; pastSettle moves a test's clock past it instead
// of sleeping or back-dating files the fake CLI itself wrote.
const settle = 150 * time.Millisecond

// skipped holds each running test's skip, by test name: a subtest's clock
// adds its parents' skips, so an engine made in a subtest sees time its
// parent skipped.
var skipped sync.Map // string -> *atomic.Int64

func skipOf(t testing.TB) *atomic.Int64 {
	v, loaded := skipped.LoadOrStore(t.Name(), new(atomic.Int64))
	if !loaded {
		name := t.Name()
		t.Cleanup(func() { skipped.Delete(name) })
	}
	return v.(*atomic.Int64)
}

// pastSettle moves t's clock (and its subtests') past the settle window:
// every lock written so far reads older than it to engines made by
// clockOf(t). Locks written afterwards are young again only to a real clock.
func pastSettle(t testing.TB) { skipOf(t).Add(int64(settle + 50*time.Millisecond)) }

// clockOf is t's clock, for Options.Now.
func clockOf(t testing.TB) func() time.Time {
	names := []string{}
	for name := t.Name(); ; {
		names = append(names, name)
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			break
		}
		name = name[:i]
	}
	skipOf(t)
	return func() time.Time {
		var d int64
		for _, n := range names {
			if v, ok := skipped.Load(n); ok {
				d += v.(*atomic.Int64).Load()
			}
		}
		return time.Now().Add(time.Duration(d))
	}
}

// pastSettleClock is the clock of a helper process whose parent skipped the
// settle window: the skip cannot cross the exec.
func pastSettleClock() time.Time { return time.Now().Add(settle + 50*time.Millisecond) }
