//go:build !(linux || darwin || freebsd || netbsd || openbsd || windows)

package rpc

// Stdio's hold on standard output where the descriptor cannot be moved.

import "os"

// takeStdout keeps os.Stdout for the protocol; Stdio points os.Stdout at stderr.
func takeStdout() (*os.File, error) { return os.Stdout, nil }
