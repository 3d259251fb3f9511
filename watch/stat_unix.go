//go:build unix

package watch

import "golang.org/x/sys/unix"

// dirStat reads the modification times of the session directories for poll
// mode, which calls it for every session on every tick: relative to an open
// descriptor of the state dir, so the kernel resolves one name instead of
// the whole path.
type dirStat struct{ fd int }

var closedDirStat = dirStat{fd: -1}

func openDirStat(dir string) dirStat {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fd = -1
	}
	return dirStat{fd: fd}
}

func (d dirStat) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
	}
}

// dirMtime returns a directory's modification time in nanoseconds without
// following a symlink; false if path is not (or no longer) a directory.
func dirMtime(path string) (int64, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, false
	}
	return st.Mtim.Nano(), true
}

// gone reports whether the state dir this descriptor was opened on has been
// removed. The open descriptor itself holds back inotify's IN_DELETE_SELF
// until it is closed, so poll mode has to ask.
func (d dirStat) gone() bool {
	if d.fd < 0 {
		return false
	}
	var st unix.Stat_t
	return unix.Fstat(d.fd, &st) != nil || st.Nlink == 0
}

// dirIdentity is the device and inode of the directory path names,
// following symlinks.
func dirIdentity(path string) (identity, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return identity{}, false
	}
	return identity{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}
