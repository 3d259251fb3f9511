package watch

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// statName is a session directory's name ready for statx: NUL-terminated,
// so the call neither scans nor copies it on every tick.
type statName []byte

func newStatName(id string) statName { return append([]byte(id), 0) }

// mtime is dirMtime for the entry name of the state dir. statx asks for
// only the two fields it needs.
func (d dirStat) mtime(name statName) (int64, bool) {
	if d.fd < 0 {
		return 0, false
	}
	var st unix.Statx_t
	_, _, errno := unix.Syscall6(unix.SYS_STATX, uintptr(d.fd), uintptr(unsafe.Pointer(&name[0])),
		unix.AT_SYMLINK_NOFOLLOW|unix.AT_STATX_DONT_SYNC, unix.STATX_TYPE|unix.STATX_MTIME,
		uintptr(unsafe.Pointer(&st)), 0)
	if errno != 0 || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, false
	}
	return st.Mtime.Sec*1e9 + int64(st.Mtime.Nsec), true
}
