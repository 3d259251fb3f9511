package sessionlocks

// Processes on Linux, read from /proc: start time, command line, thread group.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Not gopsutil: its boot time is /proc/stat's btime, whole seconds, an error
// as large as the 1 s a lock's mtime may differ from its writer's start.

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's starttime: 100 on
// every architecture Go supports.
const clockTicks = 100

var procBufs = sync.Pool{New: func() any { b := make([]byte, 4096); return &b }}

// readSmall reads a /proc record file with one read, which procfs fills
// whole when buf is large enough (a longer command line is cut, which is
// fine for recognising it). If st is not nil, it receives the file's fstat.
func readSmall(path string, buf []byte, st *unix.Stat_t) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	if st != nil {
		if err := unix.Fstat(fd, st); err != nil {
			return 0, err
		}
	}
	var n int
	err = noEINTR(func() (err error) { n, err = unix.Read(fd, buf); return err })
	return max(n, 0), err
}

func readProc(pid int) procInfo {
	info := procInfo{uid: -1, ppid: -1}
	bp := procBufs.Get().(*[]byte)
	defer procBufs.Put(bp)
	buf := *bp

	// kill(pid, 0) is far faster than a failed lookup in /proc, and most
	// locks name the dead. (hidepid cannot fool it: EPERM means someone has it.)
	if signalZero(pid) == unix.ESRCH {
		info.state = procGone
		return info
	}
	// The owner of /proc/<pid>/stat is the process's effective uid.
	var st unix.Stat_t
	n, err := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf, &st)
	if err != nil {
		if err == unix.ENOENT || err == unix.ESRCH {
			// /proc may hide other users' processes (hidepid): ask the
			// kernel directly before calling the process gone.
			switch signalZero(pid) {
			case unix.ESRCH:
				info.state = procGone
				return info
			case nil, unix.EPERM:
				info.err = fmt.Errorf("pid %d exists but /proc hides it (hidepid?)", pid)
				return info
			}
		}
		info.err = fmt.Errorf("reading /proc/%d/stat: %w", pid, err)
		return info
	}
	f, err := parseStat(buf[:n])
	if err != nil {
		info.err = fmt.Errorf("/proc/%d/stat: %w", pid, err)
		return info
	}
	info.ppid = f.ppid
	info.tty, info.ttyKnown = ttyName(f.ttyNr), true
	if boot, err := bootTime(); err == nil {
		info.start = boot.Add(time.Duration(f.start) * (time.Second / clockTicks))
	}
	// A thread's tid opens /proc/<tid> as a pid would; its stat says so
	// (exit_signal -1), else pidfd_open does.
	leader, err := f.exitSignal != -1, error(nil)
	if !f.hasExitSignal {
		leader, err = isLeader(pid)
	}
	switch {
	case errors.Is(err, unix.ESRCH):
		info.state = procGone // exited since its stat was read
		return info
	case err != nil:
		info.err = fmt.Errorf("pid %d: cannot tell whether it is a process or a thread: %w", pid, err)
		return info
	case !leader:
		info.state = procThread
		info.tgid, _ = statusTgid(pid)
		return info
	}
	switch {
	case f.state == 'Z' && f.threads > 1:
		// The main thread exited, the others run on: the process is alive.
	case f.state == 'Z', f.state == 'X', f.state == 'x':
		info.state = procZombie
		return info
	}
	info.state = procAlive

	info.uid = int(st.Uid)
	n, err = readSmall("/proc/"+strconv.Itoa(pid)+"/cmdline", buf, nil)
	if err != nil {
		info.err = fmt.Errorf("reading /proc/%d/cmdline: %w", pid, err)
		return info
	}
	info.argv = splitArgv(buf[:n])
	return info
}

// isLeader reports whether pid is a thread-group leader (a process, not
// one of its other threads): pidfd_open refuses (EINVAL) other threads;
// where it is forbidden (before Linux 5.3, seccomp), /proc/<pid>/status says.
func isLeader(pid int) (bool, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	switch err {
	case nil:
		unix.Close(fd)
		return true, nil
	case unix.EINVAL:
		return false, nil
	case unix.ESRCH:
		return false, err
	}
	tgid, err := statusTgid(pid)
	return err == nil && tgid == pid, err
}

// statusTgid reads the Tgid line of /proc/<pid>/status.
func statusTgid(pid int) (int, error) {
	b, err := readStatus(pid)
	if err != nil {
		return 0, err
	}
	v, ok := statusField(b, "Tgid:")
	if !ok {
		return 0, fmt.Errorf("/proc/%d/status has no Tgid", pid)
	}
	return strconv.Atoi(string(v))
}

// readStatus reads /proc/<pid>/status whole, into a fresh buffer.
func readStatus(pid int) ([]byte, error) {
	buf := make([]byte, 4096)
	n, err := readSmall("/proc/"+strconv.Itoa(pid)+"/status", buf, nil)
	if err == unix.ENOENT {
		err = unix.ESRCH
	}
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// statusField returns the trimmed value of the status line of key ("Tgid:").
func statusField(b []byte, key string) ([]byte, bool) {
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte(key)); ok {
			return bytes.TrimSpace(v), true
		}
	}
	return nil, false
}

// statFields are the fields of /proc/<pid>/stat the engine reads.
type statFields struct {
	state   byte
	ppid    int
	ttyNr   uint32 // the controlling terminal's device number (field 7); 0 for none
	threads int    // num_threads (field 20)
	start   uint64 // starttime in clock ticks since boot (field 22)
	// exitSignal (field 38) is -1 for a thread that is not its group's
	// leader; hasExitSignal is false where the line stops short of it.
	exitSignal    int
	hasExitSignal bool
}

// parseStat reads /proc/<pid>/stat. The comm field may hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStat(b []byte) (statFields, error) {
	var f statFields
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return f, errors.New("malformed")
	}
	// After comm: state(3) ppid(4) ... num_threads(20) ... starttime(22)
	// ... exit_signal(38), that is fields 0, 1, 17, 19 and 35 from here.
	var fields [36][]byte
	n := 0
	for rest := b[i+2:]; n < len(fields) && len(rest) > 0; n++ {
		j := bytes.IndexByte(rest, ' ')
		if j < 0 {
			j = len(rest)
		}
		fields[n], rest = rest[:j], rest[min(j+1, len(rest)):]
	}
	if n < 20 || len(fields[0]) != 1 {
		return f, errors.New("malformed")
	}
	f.state = fields[0][0]
	var err error
	if f.ppid, err = strconv.Atoi(string(fields[1])); err != nil {
		return f, errors.New("malformed ppid")
	}
	if tty, err := strconv.ParseInt(string(fields[4]), 10, 64); err == nil {
		f.ttyNr = uint32(tty)
	}
	if f.threads, err = strconv.Atoi(string(fields[17])); err != nil {
		return f, errors.New("malformed num_threads")
	}
	if f.start, err = strconv.ParseUint(string(bytes.TrimSpace(fields[19])), 10, 64); err != nil {
		return f, errors.New("malformed starttime")
	}
	if n == len(fields) {
		f.exitSignal, err = strconv.Atoi(string(bytes.TrimSpace(fields[35])))
		f.hasExitSignal = err == nil
	}
	return f, nil
}

// ttyName names a controlling terminal from its device number (minor in
// bits 0-7 and 20-31, major in 8-19): pts/N (majors 136-143), ttyN and
// ttySN (major 4), else the numbers.
func ttyName(nr uint32) string {
	if nr == 0 {
		return ""
	}
	major, minor := nr>>8&0xfff, nr&0xff|nr>>12&0xfff00
	switch {
	case major >= 136 && major <= 143:
		return "pts/" + strconv.Itoa(int((major-136)<<8|minor))
	case major == 4 && minor < 64:
		return "tty" + strconv.Itoa(int(minor))
	case major == 4:
		return "ttyS" + strconv.Itoa(int(minor-64))
	}
	return "tty(" + strconv.Itoa(int(major)) + ":" + strconv.Itoa(int(minor)) + ")"
}

// splitArgv splits a NUL-separated command line. A process that rewrote its
// argv into one space-separated string is returned as that one string.
func splitArgv(b []byte) []string {
	if b = bytes.TrimRight(b, "\x00"); len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// bootTime is the instant the machine booted on today's wall clock:
// CLOCK_REALTIME minus CLOCK_BOOTTIME (which counts suspend, as process
// start times do). The difference changes only when the wall clock steps,
// so it is kept, and read again when the wall clock has moved otherwise
// than Go's monotonic one (a step, or a suspend): that spares a probe two
// clock_gettime system calls.
func bootTime() (time.Time, error) {
	now := time.Now()
	if k := bootKept.Load(); k != nil {
		moved := now.UnixNano() - k.wall - int64(now.Sub(monoRef)-k.mono)
		if moved > -int64(time.Microsecond) && moved < int64(time.Microsecond) {
			return k.boot, nil
		}
	}
	return readBootTime()
}

// bootReading is a boot time and the wall (Unix ns) and monotonic (since
// monoRef) clocks it was computed at.
type bootReading struct {
	boot time.Time
	wall int64
	mono time.Duration
}

var (
	bootKept atomic.Pointer[bootReading] // the last one read
	monoRef  = time.Now()
)

// readBootTime computes the boot time from a wall clock reading between two
// of CLOCK_BOOTTIME, and keeps it; a reading whose two are far apart (the
// thread was preempted) is made again, as its error would be kept.
func readBootTime() (time.Time, error) {
	var before, after unix.Timespec
	for try := 0; ; try++ {
		if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &before); err != nil {
			return time.Time{}, err
		}
		now := time.Now()
		if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &after); err != nil {
			return time.Time{}, err
		}
		gap := after.Nano() - before.Nano()
		if gap > int64(20*time.Microsecond) && try < 3 {
			continue
		}
		boot := now.Round(0).Add(-time.Duration(before.Nano() + gap/2))
		bootKept.Store(&bootReading{boot: boot, wall: now.UnixNano(), mono: now.Sub(monoRef)})
		return boot, nil
	}
}

// procExe is the path of pid's executable, or "" when it cannot be read.
func procExe(pid int) string {
	p, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe") // "" on error
	return p
}

// procExeID is the identity of pid's executable, which exec changes, from
// the kernel's cache (AT_STATX_DONT_SYNC: a stuck NFS mount cannot hang it).
func procExeID(pid int) fileID {
	var stx unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, "/proc/"+strconv.Itoa(pid)+"/exe", unix.AT_STATX_DONT_SYNC, unix.STATX_INO, &stx) != nil {
		return fileID{}
	}
	return fileID{dev: unix.Mkdev(stx.Dev_major, stx.Dev_minor), ino: stx.Ino, mode: 1}
}

// procComm is the name of pid's main thread (/proc/<pid>/comm).
func procComm(pid int) string {
	var buf [64]byte
	n, _ := readSmall("/proc/"+strconv.Itoa(pid)+"/comm", buf[:], nil) // 0 on error
	return strings.TrimSuffix(string(buf[:n]), "\n")
}
