package sessionlocks

// What a process's own descriptors say: whether it has this very file open
// (/proc/<pid>/fd), and whether it holds an exclusive flock through that
// descriptor (/proc/<pid>/fdinfo): the proof that a process holds a
// session. Not /proc/locks, which names whoever called flock, not who holds
// the lock now. Nothing here waits on the file's own file system (links
// read as text, statx(AT_STATX_DONT_SYNC)): a stuck NFS server cannot hang
// a listing.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// holdsFile reports whether pid has a descriptor open on the file want
// (base name name), and, with flock, that it holds an exclusive flock
// through it. Without the right to trace pid the answer is false.
func holdsFile(pid int, name string, want fileID, flock bool) bool {
	d, err := os.Open("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return false
	}
	defer d.Close()
	fds, err := d.Readdirnames(-1)
	if err != nil {
		return false
	}
	dfd := int(d.Fd())
	link := make([]byte, 4096)
	for _, fd := range fds {
		// The link's text first: nothing is asked of another file's file system.
		n, err := unix.Readlinkat(dfd, fd, link)
		if err != nil || n <= 0 || !strings.HasSuffix(string(link[:n]), "/"+name) && string(link[:n]) != name {
			continue
		}
		var stx unix.Statx_t
		if unix.Statx(dfd, fd, unix.AT_STATX_DONT_SYNC, unix.STATX_INO, &stx) != nil {
			continue
		}
		if stx.Ino != want.ino || unix.Mkdev(stx.Dev_major, stx.Dev_minor) != want.dev {
			continue
		}
		if !flock || fdHoldsFlock(pid, fd) {
			return true
		}
	}
	return false
}

// fdHoldsFlock reports whether descriptor fd of pid holds an exclusive
// flock: a "lock: ... FLOCK ... WRITE" line in its fdinfo.
func fdHoldsFlock(pid int, fd string) bool {
	buf := make([]byte, 4096)
	n, err := readSmall("/proc/"+strconv.Itoa(pid)+"/fdinfo/"+fd, buf, nil)
	if err != nil {
		return false
	}
	for line := range bytes.Lines(buf[:n]) {
		rest, ok := bytes.CutPrefix(line, []byte("lock:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		// "1:", "FLOCK", "ADVISORY", "WRITE", pid, maj:min:ino, start, end;
		// a "->" marks a request waiting for the lock, not holding it.
		if len(f) >= 4 && string(f[1]) == "FLOCK" && string(f[3]) == "WRITE" {
			return true
		}
	}
	return false
}

// holderOf finds the process that holds the exclusive flock on the file
// want (named name) through a descriptor of its own, or 0: a walk of
// /proc, to recover a .hold an older build set aside without its name.
func holderOf(name string, want fileID) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, de := range ents {
		if pid, err := strconv.Atoi(de.Name()); err == nil && pid > 0 && holdsFile(pid, name, want, true) {
			return pid
		}
	}
	return 0
}

// lockTableHolds reports whether /proc/locks shows an exclusive flock held
// on the file want, by anyone, for a young .hold whose pid runs nowhere
// here: reading it never disturbs a CLI about to take its flock. The table
// names a super block's device, which is not stat's on a btrfs subvolume
// or an overlay: the inode alone is matched, erring toward live.
func lockTableHolds(want fileID) bool {
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false
	}
	ino := []byte(":" + strconv.FormatUint(want.ino, 10))
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		// "1:", "FLOCK", "ADVISORY", "WRITE", pid, maj:min:ino, start, end;
		// a "->" marks a request waiting for the lock, not holding it.
		if len(f) >= 6 && string(f[1]) == "FLOCK" && string(f[3]) == "WRITE" && bytes.HasSuffix(f[5], ino) {
			return true
		}
	}
	return false
}

// hasOpen says whether pid has the file want (at path) open: with
// exclusive, through a descriptor that holds its exclusive flock. The
// error says what was not found.
func hasOpen(path string, want fileID, pid int, exclusive bool) error {
	if holdsFile(pid, filepath.Base(path), want, exclusive) {
		return nil
	}
	if exclusive {
		return fmt.Errorf("pid %d does not hold the exclusive flock on %s through a descriptor of its own", pid, filepath.Base(path))
	}
	return fmt.Errorf("pid %d does not have %s open", pid, filepath.Base(path))
}
