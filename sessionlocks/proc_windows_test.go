package sessionlocks

import (
	"testing"

	"github.com/shirou/gopsutil/v4/process"
)

// A process that exits between readProc's look at it and the read of its command line has none to read (gopsutil
// reads it as ""): it must read as unreadable, not as the sidecar's own path, which is what CommandLineToArgv
// makes of an empty command line and what gopsutil's CmdlineSlice passed on.
func TestCommandLineOfAProcessGoneMeanwhileIsUnreadable(t *testing.T) {
	p := &process.Process{Pid: 0x7ffffffc} // no such process
	if argv, err := cmdline(p); argv != nil || err == nil {
		t.Fatalf("cmdline of pid %d, which does not exist: %q, %v; want no argv and an error", p.Pid, argv, err)
	}
	if argv, err := p.CmdlineSlice(); err == nil {
		t.Logf("gopsutil's CmdlineSlice reads it as %q", argv)
	}
}
