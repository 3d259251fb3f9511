//go:build unix && !linux

package watch

import "golang.org/x/sys/unix"

type statName = string

func newStatName(id string) statName { return id }

// mtime is dirMtime for the entry name of the state dir.
func (d dirStat) mtime(name statName) (int64, bool) {
	if d.fd < 0 {
		return 0, false
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, false
	}
	return st.Mtim.Nano(), true
}
