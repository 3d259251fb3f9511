//go:build !linux

package sessionlocks

// holdsFile: only Linux shows another process's descriptors and the locks
// held through them. Elsewhere no process is ever proven to hold a session,
// and nothing is signalled.
func holdsFile(pid int, name string, want fileID, flock bool) bool { return false }

// holderOf: no process's descriptors can be read here.
func holderOf(name string, want fileID) int { return 0 }

// lockTableHolds: no lock table can be read here without touching the file.
func lockTableHolds(want fileID) bool { return false }
