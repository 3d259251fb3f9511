package sessionlocks

// Positive evidence that a session is held, beyond the lock's own pid: the
// kernel's lock table, and CLIs in other PID namespaces. Each of these can
// only keep a holder live; none makes one stale.

import "time"

// holdLocked finds an exclusive flock on r's .hold in the kernel's lock
// table: a lock on the very file (same device), or, where the file system
// reports another device than the table (btrfs), one whose owner's pid is
// the one the .hold names.
func (e *Engine) holdLocked(r lockRef, sg *sight) (kernelLock, bool) {
	for _, l := range sg.kernelLocks().on(r.hold) {
		if l.kind == lockFlock && l.write && (l.sameDev(r.hold) || namesPID(l.pid, r.pid)) {
			return l, true
		}
	}
	return kernelLock{}, false
}

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

// nsCLI is a Copilot CLI found in another PID namespace.
type nsCLI struct {
	pid   int // here
	argv  []string
	start time.Time
}

// otherNamespaceCLI finds a live Copilot CLI in a PID namespace below this
// one whose pid there is pid and which started before the lock was written
// (within the tolerance for a CLI's clock): a container sharing ~/.copilot
// writes its own namespace's pids. Only asked when a lock would otherwise
// be stale.
func (e *Engine) otherNamespaceCLI(pid int, written time.Time, tol time.Duration) *nsCLI {
	if e.nestedNS {
		return nil // processes outside are invisible; the verdict is unknown anyway
	}
	for _, here := range e.inOtherNamespaces(pid) {
		p := readProc(here)
		if p.state != procAlive || p.start.IsZero() || !isCopilot(p.argv, here) {
			continue
		}
		if p.start.After(written.Add(max(tol, e.cliTolerance()))) {
			continue
		}
		return &nsCLI{pid: here, argv: p.argv, start: p.start}
	}
	return nil
}
