package sessionlocks

import (
	"errors"
	"fmt"
	"time"

	"github.com/shirou/gopsutil/v4/process"
	"golang.org/x/sys/windows"
)

// On Windows the process handle answers whether the pid runs and when it
// started; the command line comes from gopsutil, which reads it from the
// process's PEB (there is no simpler documented call).

const stillActive = 259 // STILL_ACTIVE

func readProc(pid int) procInfo {
	info := procInfo{uid: -1, ppid: -1}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			info.state = procGone
			return info
		}
		info.err = fmt.Errorf("OpenProcess %d: %w", pid, err)
		return info
	}
	defer windows.CloseHandle(h)
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &creation, &exit, &kernel, &user); err == nil {
		info.start = time.Unix(0, creation.Nanoseconds())
	}
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err == nil && code != stillActive {
		info.state = procZombie // exited; a handle somewhere keeps the pid reserved
		return info
	}
	info.state = procAlive
	if p, err := process.NewProcess(int32(pid)); err == nil {
		info.argv, info.err = cmdline(p)
		if pp, err := p.Ppid(); err == nil {
			info.ppid = int(pp)
		}
	}
	return info
}

// cmdline is p's command line split as Windows splits it. Not gopsutil's
// CmdlineSlice: CommandLineToArgv answers an empty line with the path of
// the calling program, the sidecar.
func cmdline(p *process.Process) ([]string, error) {
	line, err := p.Cmdline()
	if err == nil && line == "" {
		err = errors.New("it reads empty")
	}
	if err != nil {
		return nil, fmt.Errorf("reading the command line of pid %d: %w", p.Pid, err)
	}
	return windows.DecomposeCommandLine(line)
}

func bootTime() (time.Time, error) {
	return time.Now().Add(-windows.DurationSinceBoot()), nil
}

// procExe is the executable's path, from gopsutil.
func procExe(pid int) string {
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return ""
	}
	exe, _ := p.Exe()
	return exe
}

// procExeID: Windows signals nothing, so it is never needed.
func procExeID(pid int) fileID { return fileID{} }

// procComm: only Linux names threads where another process can read it.
func procComm(pid int) string { return "" }
