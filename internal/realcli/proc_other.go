//go:build !unix

package realcli

import (
	"errors"
	"os"
	"os/exec"
)

// The real CLI's conformance tests run on Linux; elsewhere the harness
// compiles so that `go vet` covers it, and reports what it cannot do.

func setProcessGroup(cmd *exec.Cmd) {}

func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// HoldLocked is not implemented on this platform.
func HoldLocked(path string) (bool, error) {
	return false, errors.New("realcli: probing a .hold is implemented on unix only")
}

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p != nil
}
