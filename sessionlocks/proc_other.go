//go:build !linux && !darwin && !windows

package sessionlocks

import (
	"errors"
	"time"
)

// Elsewhere the engine cannot examine processes: every verdict that needs
// one is unknown (a jail hides the processes outside it). The .hold probe
// still decides for CLIs that use it.

var errNoProcessProbe = errors.New("examining processes is not supported on this platform")

func readProc(pid int) procInfo { return procInfo{uid: -1, ppid: -1, err: errNoProcessProbe} }

func bootTime() (time.Time, error) { return time.Time{}, errNoProcessProbe }

func procExe(pid int) string { return "" }

func procExeID(pid int) fileID { return fileID{} }

// procComm: only Linux names threads where another process can read it.
func procComm(pid int) string { return "" }
