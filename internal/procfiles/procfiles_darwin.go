package procfiles

// macOS: libproc through purego (no cgo), as gopsutil calls it. Each call
// returns a byte count, or 0 with errno set, which SyscallN reads on the
// same thread; buffers are converted to uintptr in the SyscallN call itself
// (go:uintptrescapes). Not proc_listpidspath(3): it matches a path stat'ed
// anew, not the identity judged, and skips the processes it cannot read.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"
)

const procPIDPathInfoMaxSize = 4 * maxPathLen // PROC_PIDPATHINFO_MAXSIZE

// lib holds libSystem's libproc functions, resolved once. The library is
// never closed: closing it under the Go runtime crashes (gopsutil #1832).
var lib struct {
	once                                  sync.Once
	err                                   error
	listPIDs, pidInfo, pidFDInfo, pidPath uintptr
}

func load() error {
	lib.once.Do(func() {
		h, err := purego.Dlopen("/usr/lib/libSystem.B.dylib", purego.RTLD_LAZY|purego.RTLD_GLOBAL)
		if err != nil {
			lib.err = fmt.Errorf("%w: libSystem cannot be loaded: %v", errors.ErrUnsupported, err)
			return
		}
		for _, s := range []struct {
			fn   *uintptr
			name string
		}{{&lib.listPIDs, "proc_listpids"}, {&lib.pidInfo, "proc_pidinfo"}, {&lib.pidFDInfo, "proc_pidfdinfo"}, {&lib.pidPath, "proc_pidpath"}} {
			if *s.fn, err = purego.Dlsym(h, s.name); err != nil {
				lib.err = fmt.Errorf("%w: libSystem has no %s: %v", errors.ErrUnsupported, s.name, err)
				return
			}
		}
	})
	return lib.err
}

// listPIDs returns every process's pid (proc_listpids(PROC_ALL_PIDS)); a
// full buffer may have been cut short, and is asked again, larger.
func listPIDs() ([]int32, error) {
	for extra := 64; extra <= 4096; extra *= 4 {
		n, _, errno := purego.SyscallN(lib.listPIDs, procAllPIDs, 0, 0, 0)
		if int32(n) <= 0 {
			return nil, fmt.Errorf("proc_listpids: %w", syscall.Errno(errno))
		}
		buf := make([]byte, int(int32(n))+4*extra)
		m, _, errno := purego.SyscallN(lib.listPIDs, procAllPIDs, 0, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if int32(m) <= 0 {
			return nil, fmt.Errorf("proc_listpids: %w", syscall.Errno(errno))
		}
		if int(int32(m)) < len(buf) {
			return decodePIDs(buf[:m]), nil
		}
	}
	return nil, errors.New("proc_listpids: processes are being created faster than they can be listed")
}

// listFDs returns pid's descriptors (proc_pidinfo(PROC_PIDLISTFDS)); the
// sizing call's errno is the error.
func listFDs(pid int32) ([]fdEntry, error) {
	for range 3 {
		n, _, errno := purego.SyscallN(lib.pidInfo, uintptr(pid), procPIDListFDs, 0, 0, 0)
		if int32(n) <= 0 {
			return nil, syscall.Errno(errno)
		}
		buf := make([]byte, int(int32(n)))
		m, _, _ := purego.SyscallN(lib.pidInfo, uintptr(pid), procPIDListFDs, 0, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if int(int32(m)) < len(buf) {
			return decodeFDList(buf[:max(int32(m), 0)])
		}
		// The table grew past the room the kernel asked for: again.
	}
	return nil, syscall.EAGAIN
}

// fdFile returns the file descriptor fd of pid is open on
// (proc_pidfdinfo(PROC_PIDFDVNODEPATHINFO)), into buf.
func fdFile(pid, fd int32, buf []byte) (OpenFile, error) {
	n, _, errno := purego.SyscallN(lib.pidFDInfo, uintptr(pid), uintptr(fd), procPIDFDVnodePathInfo, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if int32(n) <= 0 {
		return OpenFile{}, syscall.Errno(errno)
	}
	return decodeVnodePath(fd, buf[:n])
}

// eachFile calls fn with each of pid's descriptors open on a file until fn
// returns false. Descriptors closed meanwhile (EBADF) are passed over; the
// error says whether any other could not be read.
func eachFile(ctx context.Context, pid int32, buf []byte, fn func(OpenFile) bool) error {
	fds, err := listFDs(pid)
	if err != nil {
		return err
	}
	var unread []int32
	for _, e := range fds {
		if e.typ != proxFDTypeVnode {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := fdFile(pid, e.fd, buf)
		switch {
		case errors.Is(err, syscall.EBADF):
			continue
		case errors.Is(err, syscall.ESRCH):
			return err
		case err != nil:
			unread = append(unread, e.fd)
			continue
		}
		if !fn(f) {
			return nil
		}
	}
	if len(unread) > 0 {
		return fmt.Errorf("descriptors %v of pid %d could not be read", unread, pid)
	}
	return nil
}

// openers walks every process's descriptors for want.
func openers(ctx context.Context, path string, want FileID) (found, error) {
	if err := load(); err != nil {
		return found{}, err
	}
	if err := isFile(path, want); err != nil {
		return found{}, err
	}
	pids, err := listPIDs()
	if err != nil {
		return found{}, err
	}
	var r found
	buf := make([]byte, vnodeFDInfoWithPathSize)
	for _, pid := range pids {
		has := false
		err := eachFile(ctx, pid, buf, func(f OpenFile) bool {
			has = sameDarwinFile(f.FileID, want)
			return !has
		})
		switch {
		case ctx.Err() != nil:
			return found{}, ctx.Err()
		case has:
			// Read after the match: then it is the matched process's start.
			if start, err := startTime(pid); err == nil {
				r.procs = append(r.procs, Process{PID: int(pid), Start: start})
			}
		case errors.Is(err, syscall.ESRCH):
			// Exited: it has nothing open.
		case err != nil:
			r.unseen++
		}
	}
	return r, isFile(path, want)
}

// isFile checks that path is the file want.
func isFile(path string, want FileID) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fmt.Errorf("lstat %s: %w", path, err)
	}
	if !sameDarwinFile(FileID{Dev: uint64(uint32(st.Dev)), Ino: st.Ino}, want) {
		return fmt.Errorf("%s: %w", path, ErrChanged)
	}
	return nil
}

// startTime is pid's start time from kern.proc.pid, as the engine reads it.
func startTime(pid int32) (time.Time, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", int(pid))
	if err != nil {
		return time.Time{}, err
	}
	if kp.Proc.P_pid != pid {
		return time.Time{}, syscall.ESRCH
	}
	return time.Unix(kp.Proc.P_starttime.Unix()), nil
}

func executable(pid int) (string, error) {
	if err := load(); err != nil {
		return "", err
	}
	buf := make([]byte, procPIDPathInfoMaxSize)
	n, _, errno := purego.SyscallN(lib.pidPath, uintptr(pid), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if int32(n) <= 0 {
		return "", fmt.Errorf("proc_pidpath %d: %w", pid, syscall.Errno(errno))
	}
	return string(buf[:n]), nil
}

const nodev = -1 // NODEV: e_tdev without a controlling terminal

func terminal(pid int) (string, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return "", fmt.Errorf("sysctl kern.proc.pid %d: %w", pid, err)
	}
	if kp.Proc.P_pid != int32(pid) {
		return "", fmt.Errorf("sysctl kern.proc.pid %d: %w", pid, syscall.ESRCH)
	}
	if kp.Eproc.Tdev == nodev {
		return "", nil
	}
	return devName("/dev", uint64(kp.Eproc.Tdev))
}
