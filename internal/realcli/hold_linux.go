package realcli

// Whether a .hold is flocked, read from /proc/locks without touching it.

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// HoldLocked reports whether some process holds a flock on path. It reads
// /proc/locks rather than trying a lock itself: even a shared, at once
// released probe, taken in the instant between the CLI creating its .hold and
// flocking it with LOCK_EX|LOCK_NB, makes the real CLI give up the session
// ("Session ownership handshake is already held"), and a test that polls
// must not be the cause of what it observes.
func HoldLocked(path string) (bool, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return false, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return false, err
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1186 fe:00:10083988 0 EOF"; waiters
		// ("1: -> FLOCK ...") do not hold the lock.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" {
			continue
		}
		if sameDevIno(fields[5], want) {
			return true, nil
		}
	}
	return false, sc.Err()
}

// sameDevIno compares "maj:min:ino" as numbers, since the kernel pads the
// hex device numbers to two digits but not beyond.
func sameDevIno(a, b string) bool {
	pa, pb := strings.Split(a, ":"), strings.Split(b, ":")
	if len(pa) != 3 || len(pb) != 3 {
		return false
	}
	for i, base := range []int{16, 16, 10} {
		x, err1 := strconv.ParseUint(pa[i], base, 64)
		y, err2 := strconv.ParseUint(pb[i], base, 64)
		if err1 != nil || err2 != nil || x != y {
			return false
		}
	}
	return true
}
