package sessionlocks

// CLIs in other PID namespaces: a container sharing ~/.copilot writes its
// own namespace's pids, which here name another process or none. What is
// found here can only keep a holder live.

import (
	"sync"
	"time"
)

// namesPID reports whether the process pid (here) is the one a lock file
// names as named: the same pid, or its pid in the nested PID namespace it
// runs in.
func namesPID(pid, named int) bool {
	if pid == named {
		return true
	}
	if pid <= 0 {
		return false
	}
	ns, err := nsPIDs(pid)
	return err == nil && len(ns) > 1 && ns[len(ns)-1] == named
}

// nsProc is a live process in another PID namespace whose pid there is
// the one a lock names, and which started before the lock was written.
type nsProc struct {
	pid   int // here
	argv  []string
	start time.Time
	cli   bool // recognisably the Copilot CLI
}

// inOtherNamespace finds such a process, a Copilot CLI first, from a list
// of other namespaces' processes made after notBefore.
func (e *Engine) inOtherNamespace(pid int, written, notBefore time.Time, tol time.Duration) *nsProc {
	var found *nsProc
	for _, here := range e.inOtherNamespaces(pid, notBefore) {
		p := readProc(here)
		if p.state != procAlive || p.start.IsZero() {
			continue
		}
		cli := isCopilot(p.argv, here)
		limit := tol
		if cli {
			limit = max(tol, e.cliTolerance())
		}
		if p.start.After(written.Add(limit)) {
			continue // started after the lock: not its writer
		}
		n := &nsProc{pid: here, argv: p.argv, start: p.start, cli: cli}
		if cli {
			return n
		}
		if found == nil {
			found = n
		}
	}
	return found
}

// nsIndexTTL is how long the list of processes in other PID namespaces,
// a walk of /proc, is reused.
const nsIndexTTL = 2 * time.Second

// nsIndexCache lists the processes in PID namespaces below this one, by
// their innermost pid.
type nsIndexCache struct {
	mu      sync.Mutex
	at      time.Time
	byInner map[int][]int
}

// inOtherNamespaces returns the pids (here) of the processes whose pid in
// their own, nested PID namespace is pid, from a list made after notBefore.
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
