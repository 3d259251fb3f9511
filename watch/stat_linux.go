package watch

import "golang.org/x/sys/unix"

// mtime is dirMtime for the entry name of the state dir. statx asks for
// only the two fields it needs.
func (d dirStat) mtime(name string) (int64, bool) {
	if d.fd < 0 {
		return 0, false
	}
	var st unix.Statx_t
	err := unix.Statx(d.fd, name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_DONT_SYNC, unix.STATX_TYPE|unix.STATX_MTIME, &st)
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, false
	}
	return st.Mtime.Sec*1e9 + int64(st.Mtime.Nsec), true
}
