package main

// A terminal nobody reads, for serve --log-file's tests: a pseudo-terminal
// whose master is never read.

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func init() {
	terminalLog = func(t *testing.T) string {
		master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
		if err != nil {
			t.Skip("no pseudo-terminals:", err)
		}
		t.Cleanup(func() { master.Close() })
		if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
			t.Fatal(err)
		}
		n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("/dev/pts/%d", n)
	}
}
