//go:build unix

package realcli

// Process groups for the real CLI and the helpers it spawns.

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// setProcessGroup puts the CLI in a process group of its own, so that
// killGroup reaches the helpers it spawns too.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killGroup(pgid int) {
	if pgid > 1 {
		unix.Kill(-pgid, unix.SIGKILL)
	}
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return unix.Kill(pid, 0) == nil
	}
	// The state follows the parenthesised command name, which may contain ") ".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
