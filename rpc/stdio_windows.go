package rpc

// Stdio's hold on standard output on Windows: the standard output handle
// moved aside.

import (
	"os"

	"golang.org/x/sys/windows"
)

// takeStdout keeps the original standard output handle for the protocol and
// makes the process's standard output handle refer to standard error, so
// that later writers (and child processes) cannot reach the protocol stream.
func takeStdout() (*os.File, error) {
	out := os.Stdout
	if err := windows.SetStdHandle(windows.STD_OUTPUT_HANDLE, windows.Handle(os.Stderr.Fd())); err != nil {
		return nil, os.NewSyscallError("SetStdHandle", err)
	}
	return out, nil
}
