package sessionlocks

// What a process's own descriptors say: whether it has this very file open
// (/proc/<pid>/fd), and whether it holds an exclusive flock through that
// descriptor (the lock lines of /proc/<pid>/fdinfo). This is the proof that
// a process holds a session. It is read per process, not from the machine's
// whole lock table (/proc/locks, which names whoever called flock rather
// than who holds the lock now, matches by inode number across devices, and
// takes seconds to read on a machine holding 100,000 record locks).
//
// Nothing here waits on the file's own file system: the descriptor's link
// is read as text, and its file's identity with statx(AT_STATX_DONT_SYNC),
// which answers from the kernel's cache, so a stuck FUSE or NFS server
// cannot hang a listing.

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
// (named name, its base name), and, with flock, that the descriptor holds
// an exclusive flock. Reading another process's descriptors needs the right
// to trace it (the same user, or root); without it the answer is false.
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
		// The link's text first: a descriptor on another file is passed
		// over without anything being asked of its file system.
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
// want (named name) through a descriptor of its own: a walk of /proc, made
// only to recover a .hold an older build set aside without its name. 0
// when there is none this process can see.
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

// lockTableHolds reports whether the machine's lock table (/proc/locks)
// shows an exclusive flock held on the file want, whoever holds it: read
// only, it never disturbs a CLI about to take its flock. A young .hold
// whose named pid is not running here is asked this (a CLI this process
// cannot see may hold it); the table costs a line per lock on the machine.
// The table names a file by its super block's device, which is not stat's
// on a btrfs subvolume or an overlay: the inode number alone is matched,
// so that a lock on another device's same inode errs toward live (and
// only until the .hold is old enough to probe).
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
