package sessionlocks

// Reading a process on macOS: kern.proc.pid gives the state, parent, owner
// and start time (wall clock, microseconds), kern.procargs2 the command
// line, and libproc (internal/procfiles) the executable.

import (
	"fmt"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/procfiles"
	"golang.org/x/sys/unix"
)

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
	if info.argv, err = parseProcargs2(raw); err != nil {
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

// procExe is the path of pid's executable as the kernel found it at exec
// (links resolved: Homebrew's bin/copilot is a link into the cask), or "".
// Not kern.procargs2's exec path, which may be relative to pid's own cwd.
func procExe(pid int) string {
	exe, err := procfiles.Executable(pid)
	if err != nil {
		return ""
	}
	return exe
}

// procExeID is not read on macOS: a stat of the executable's path can hang
// on a stuck file system.
func procExeID(pid int) fileID { return fileID{} }

// procComm: only Linux names threads where another process can read it.
func procComm(pid int) string { return "" }
