package sessionlocks

// Reading /proc/locks: the kernel's own list of every file lock on the
// machine, with the pid of each lock's owner. Reading it never touches a
// lock, so unlike a probe it cannot get in the way of a CLI taking its
// flock, and it names who holds the lock, which a probe cannot.

import (
	"bytes"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// maxKernelLocks bounds what is read of /proc/locks (about 60 bytes a lock):
// a machine holding more is read as if the file were unreadable.
const maxKernelLocks = 16 << 20

// readKernelLocks reads /proc/locks. Held locks only: a line marked "->" is
// a process waiting for a lock, not holding it.
//
// The kernel leaves out locks whose owner this process's PID namespace
// cannot see, so inside a sandbox an absent lock proves nothing.
func readKernelLocks() (kernelLocks, error) {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return kernelLocks{}, err
	}
	defer f.Close()
	b := make([]byte, 0, 16<<10)
	for {
		if len(b) == cap(b) {
			if cap(b) >= maxKernelLocks {
				return kernelLocks{}, errors.New("/proc/locks is larger than 16 MB")
			}
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if n == 0 || err != nil {
			break
		}
	}
	return parseKernelLocks(b), nil
}

// parseKernelLocks parses the text of /proc/locks, for example
//
//	1: FLOCK  ADVISORY  WRITE 4242 fd:01:1311962 0 EOF
//	2: POSIX  ADVISORY  READ 4243 08:02:33 128 128
//	3: -> FLOCK  ADVISORY  WRITE 4244 fd:01:1311962 0 EOF
//
// Leases, delegations and malformed lines are skipped.
func parseKernelLocks(b []byte) kernelLocks {
	k := kernelLocks{ok: true, byIno: map[uint64][]kernelLock{}}
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) < 6 {
			continue
		}
		f = f[1:] // "1:"
		if string(f[0]) == "->" {
			continue
		}
		var kind lockKind
		switch string(f[0]) {
		case "FLOCK":
			kind = lockFlock
		case "POSIX":
			kind = lockPOSIX
		case "OFDLCK":
			kind = lockOFD
		default:
			continue
		}
		if len(f) < 5 {
			continue
		}
		write := string(f[2]) == "WRITE"
		if !write && string(f[2]) != "READ" {
			continue
		}
		pid, err := strconv.Atoi(string(f[3]))
		if err != nil {
			continue
		}
		if pid < 0 {
			pid = 0 // OFD locks belong to an open file, not a process
		}
		id := bytes.Split(f[4], []byte(":"))
		if len(id) != 3 {
			continue
		}
		major, err1 := strconv.ParseUint(string(id[0]), 16, 32)
		minor, err2 := strconv.ParseUint(string(id[1]), 16, 32)
		ino, err3 := strconv.ParseUint(string(id[2]), 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		k.byIno[ino] = append(k.byIno[ino], kernelLock{
			kind: kind, write: write, pid: pid,
			dev: unix.Mkdev(uint32(major), uint32(minor)),
		})
	}
	return k
}
