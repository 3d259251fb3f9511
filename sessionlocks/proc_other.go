//go:build !linux && !darwin && !windows

package sessionlocks

import (
	"errors"
	"time"
)

// Elsewhere the engine cannot examine processes: every verdict that needs
// one is unknown (unprobeable), which is never reclaimed automatically, not
// even for a pid kill(2) says nobody has (a jail hides the processes outside
// it). The .hold probe still works on every Unix, and it decides for CLIs
// that use it.

var errNoProcessProbe = errors.New("examining processes is not supported on this platform")

func readProc(pid int) procInfo { return procInfo{uid: -1, ppid: -1, err: errNoProcessProbe} }

func bootTime() (time.Time, error) { return time.Time{}, errNoProcessProbe }

func procExe(pid int) string { return "" }

func procExeID(pid int) fileID { return fileID{} }

// procComm: only Linux names threads where another process can read it.
func procComm(pid int) string { return "" }
