package sessionlocks

// lstatZ: the lstat of a session's lock files with a raw statx on a name
// the caller made NUL-terminated in its own buffer. unix.Fstatat copies
// every name into a new allocation first, and a directory of 100,000 locks
// is 100,000 of them.

import (
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// lstatZ is lstat of name, written NUL-terminated into *buf (reused).
func (d dirStat) lstatZ(name string, buf *[]byte) (fileID, error) {
	if d.err != nil {
		return fileID{}, d.err
	}
	*buf = append(append((*buf)[:0], name...), 0)
	var stx unix.Statx_t
	for {
		_, _, errno := unix.Syscall6(unix.SYS_STATX, uintptr(d.fd), uintptr(unsafe.Pointer(&(*buf)[0])),
			unix.AT_SYMLINK_NOFOLLOW, unix.STATX_TYPE|unix.STATX_INO|unix.STATX_SIZE|unix.STATX_MTIME,
			uintptr(unsafe.Pointer(&stx)), 0)
		switch errno {
		case 0:
			return statxToID(&stx), nil
		case unix.EINTR:
			continue
		}
		return fileID{}, &os.PathError{Op: "lstat", Path: filepath.Join(d.dir, name), Err: errno}
	}
}

// statxToID is statToID for a statx result.
func statxToID(stx *unix.Statx_t) fileID {
	st := unix.Stat_t{
		Dev:  unix.Mkdev(stx.Dev_major, stx.Dev_minor),
		Ino:  stx.Ino,
		Mode: uint32(stx.Mode),
		Size: int64(stx.Size),
	}
	st.Mtim.Sec, st.Mtim.Nsec = stx.Mtime.Sec, int64(stx.Mtime.Nsec)
	return statToID(&st)
}
