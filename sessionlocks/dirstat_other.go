//go:build !linux

package sessionlocks

// lstatZ is lstat (Linux's is a raw statx on a reused buffer).
func (d dirStat) lstatZ(name string, buf *[]byte) (fileID, error) { return d.lstat(name) }
