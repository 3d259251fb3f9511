package sessionlocks

// What one scan (a listing, or one session judged afresh) learns once and
// shares between the holders it judges: the kernel's lock table and the
// engine's vantage. Each is read when the first holder needs it, so that a
// listing whose verdicts all come from the probe cache reads neither, and
// no listing reads /proc/locks more than once.

import (
	"sync"
	"time"
)

type sight struct {
	e *Engine

	locksOnce sync.Once
	locks     kernelLocks

	vOnce sync.Once
	v     Vantage
}

func (e *Engine) newSight() *sight { return &sight{e: e} }

// kernelLocks is the kernel's lock table as this scan first read it.
func (s *sight) kernelLocks() kernelLocks {
	s.locksOnce.Do(func() {
		k, err := readKernelLocks()
		if err != nil {
			s.e.log.Debug("kernel lock table unreadable", "err", err)
		}
		s.locks = k
	})
	return s.locks
}

// vantage is where the engine judges from, with the state dir's file
// system as this scan first read it.
func (s *sight) vantage() Vantage {
	s.vOnce.Do(func() { s.v = s.e.Vantage() })
	return s.v
}

// Vantage says what the engine can see from where it runs: whether it is
// in a PID namespace of its own and which file system the state dir is on.
func (e *Engine) Vantage() Vantage {
	v := Vantage{NestedPIDNamespace: e.nestedNS}
	if e.fsType != "" {
		v.FileSystem, v.Shared = e.fsType, isSharedFS(e.fsType)
		return v
	}
	name, shared, err := fileSystemOf(e.dir)
	if err != nil {
		e.log.Debug("state dir file system unknown", "dir", e.dir, "err", err)
	}
	v.FileSystem, v.Shared = name, shared
	return v
}

// nsIndexTTL is how long the list of processes in other PID namespaces is
// reused: walking /proc costs a read per process on the machine.
const nsIndexTTL = 2 * time.Second

// nsIndexCache is the engine's list of processes that run in PID
// namespaces below its own, by their innermost pid.
type nsIndexCache struct {
	mu      sync.Mutex
	at      time.Time
	byInner map[int][]int
}

// inOtherNamespaces returns the pids (here) of the processes whose pid in
// their own, nested PID namespace is pid.
func (e *Engine) inOtherNamespaces(pid int) []int {
	c := &e.nsIdx
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.byInner == nil || now.Sub(c.at) > nsIndexTTL {
		idx, err := readNSIndex()
		if err != nil {
			e.log.Debug("cannot list processes in other PID namespaces", "err", err)
		}
		c.byInner, c.at = idx, now
		if c.byInner == nil {
			c.byInner = map[int][]int{}
		}
	}
	return c.byInner[pid]
}
