package sessionlocks

// Processes in PID namespaces below this one: a CLI in a container that
// shares ~/.copilot writes its pid as its own namespace numbers it, which
// here is another process's pid, or nobody's.

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// nsPIDs is a process's pid in every PID namespace it is in, from this
// one's (first) to its innermost (last): the NSpid line of its status.
func nsPIDs(pid int) ([]int, error) {
	b, err := readStatus(pid)
	if err != nil {
		return nil, err
	}
	v, ok := statusField(b, "NSpid:")
	if !ok {
		return []int{pid}, nil // before Linux 4.1: one namespace as far as we can tell
	}
	var out []int
	for _, f := range bytes.Fields(v) {
		n, err := strconv.Atoi(string(f))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// readNSIndex walks /proc and maps the innermost pid of every process in a
// nested PID namespace to its pid here.
func readNSIndex() (map[int][]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, de := range ents {
		if n, err := strconv.Atoi(de.Name()); err == nil && n > 0 {
			pids = append(pids, n)
		}
	}
	// A process in this namespace is told by its namespace link; only the
	// others' status is read.
	var own [64]byte
	n, err := unix.Readlink("/proc/self/ns/pid", own[:])
	if err != nil {
		n = 0
	}
	link := make([]byte, 64)
	idx := map[int][]int{}
	for _, pid := range pids {
		if n > 0 {
			if m, err := unix.Readlink("/proc/"+strconv.Itoa(pid)+"/ns/pid", link); err == nil && bytes.Equal(link[:m], own[:n]) {
				continue
			}
		}
		ns, err := nsPIDs(pid)
		if err != nil || len(ns) < 2 {
			continue
		}
		inner := ns[len(ns)-1]
		idx[inner] = append(idx[inner], pid)
	}
	return idx, nil
}
