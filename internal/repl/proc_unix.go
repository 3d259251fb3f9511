//go:build unix

package repl

// The REPL's children on Unix: a session of their own, and liner's redraw.

import (
	"os"
	"os/exec"
	"syscall"
)

// Isolate puts a child in a session of its own, away from the terminal, so
// that Ctrl-C there interrupts the REPL's call instead of killing the server
// (or the demo's fake CLI) under it, and the demo's CLI reads the same
// wherever the REPL runs (no terminal). The REPL ends its children itself.
// It sets cmd.SysProcAttr, which the REPL's children leave unset.
func Isolate(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// redrawLine makes liner redraw its prompt and the line being typed. liner
// has no call for this (peterh/liner#46), but it redraws both on SIGWINCH,
// which it listens for while prompting.
func redrawLine() { syscall.Kill(os.Getpid(), syscall.SIGWINCH) }
