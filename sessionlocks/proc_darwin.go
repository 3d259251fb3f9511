package sessionlocks

import (
	"fmt"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// On macOS the kernel answers through sysctl: kern.proc.pid gives the state,
// parent, owner and start time (wall clock, microseconds), kern.procargs2
// the command line.

const szomb = 5 // SZOMB in <sys/proc.h>

func readProc(pid int) procInfo {
	info := procInfo{uid: -1, ppid: -1}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		// A pid with no process answers with an empty record.
		switch signalZero(pid) {
		case unix.ESRCH:
			info.state = procGone
			return info
		case nil, unix.EPERM:
			info.err = fmt.Errorf("pid %d exists but sysctl kern.proc.pid failed: %v", pid, err)
			return info
		}
		info.err = fmt.Errorf("sysctl kern.proc.pid %d: %v", pid, err)
		return info
	}
	info.start = time.Unix(kp.Proc.P_starttime.Unix())
	info.ppid = int(kp.Eproc.Ppid)
	info.uid = int(kp.Eproc.Ucred.Uid)
	if kp.Proc.P_stat == szomb {
		info.state = procZombie
		return info
	}
	info.state = procAlive
	raw, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		info.err = fmt.Errorf("sysctl kern.procargs2 %d: %v", pid, err)
		return info
	}
	if _, info.argv, err = parseProcargs2(raw); err != nil {
		info.err = fmt.Errorf("sysctl kern.procargs2 %d: %v", pid, err)
	}
	return info
}

func bootTime() (time.Time, error) {
	tv, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(tv.Unix()), nil
}

// procExe is the executable path kern.procargs2 gives before the
// arguments, with links followed: it is the path given to exec, and
// Homebrew's bin/copilot is a link into the cask.
func procExe(pid int) string {
	raw, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return ""
	}
	p, _, err := parseProcargs2(raw)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}

// procExeID: macOS signals nothing (no proof of a lock's owner), so the
// executable's identity is never needed.
func procExeID(pid int) fileID { return fileID{} }

// procComm: only Linux names threads where another process can read it.
func procComm(pid int) string { return "" }
