//go:build !linux

package sessionlocks

// holdsFile: only Linux shows another process's descriptors and the locks
// held through them. Elsewhere no process is ever proven to hold a session,
// and nothing is signalled.
func holdsFile(pid int, name string, want fileID, flock bool) bool { return false }
