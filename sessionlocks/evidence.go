package sessionlocks

// Positive evidence that a session is held, beyond the lock's own pid: the
// kernel's lock table, and CLIs in other PID namespaces. Each of these can
// only keep a holder live; none makes one stale.

import "time"

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

// inOtherNamespace finds such a process, a Copilot CLI first: a container
// sharing ~/.copilot writes its own namespace's pids. notBefore is when the
// list of other namespaces' processes must have been made after (the
// lock's time in a listing; the decision's start in a decision). Only asked
// when a lock would otherwise be stale.
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
