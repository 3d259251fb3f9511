//go:build linux || darwin || freebsd || netbsd || openbsd

package rpc

// rawStdoutWrite for the stdio test on Unix: a write to descriptor 1.

import "syscall"

// rawStdoutWrite writes to the process's standard output beneath os.Stdout,
// as a C library or a child process would.
func rawStdoutWrite(b []byte) { syscall.Write(1, b) }
