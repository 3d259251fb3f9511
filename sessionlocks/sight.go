package sessionlocks

// What one scan (a listing, or one session judged afresh) shares between
// the holders it judges: the engine's vantage, read when the first holder
// needs it, when the scan began, and whether it is a decision (a judgement
// a user acts on).

import (
	"sync"
	"time"
)

type sight struct {
	e     *Engine
	began time.Time
	// fresh: a decision, which trusts no account of other PID namespaces
	// made before it began; prove: one that may signal, which proves the
	// owner of every live holder; brief: holders beyond the listed ones
	// need only their verdict (nothing but a count is made of them).
	fresh, prove, brief bool

	vOnce sync.Once
	v     Platform
}

// newSight is a listing's sight.
func (e *Engine) newSight() *sight { return &sight{e: e, began: time.Now(), brief: true} }

// decisionSight is the sight of a judgement a user acts on (canResume,
// reclaimStale, forceResume); prove for one that may signal.
func (e *Engine) decisionSight(prove bool) *sight {
	return &sight{e: e, began: time.Now(), fresh: true, prove: prove}
}

// vantage is where the engine judges from, with the state dir's file
// system as this scan first read it.
func (s *sight) vantage() Platform {
	s.vOnce.Do(func() { s.v = s.e.platform() })
	return s.v
}

// Platform says what the engine can see from where it runs: whether it is
// in a PID namespace of its own and which file system the state dir is on.
func (e *Engine) platform() Platform {
	v := Platform{NestedPIDNamespace: e.nestedNS}
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
// their own, nested PID namespace is pid. The list is made again unless it
// was made after notBefore (and is younger than nsIndexTTL): a process
// that wrote a lock at notBefore, and still runs, is then in it.
func (e *Engine) inOtherNamespaces(pid int, notBefore time.Time) []int {
	if e.nestedNS {
		return nil // processes outside are invisible; and below, the sandbox's own
	}
	c := &e.nsIdx
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.byInner == nil || now.Sub(c.at) > nsIndexTTL || !c.at.After(notBefore) {
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
