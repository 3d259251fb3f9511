//go:build !unix && !windows

package repl

// The REPL's children elsewhere: nothing to isolate, nothing to redraw.

import "os/exec"

// Isolate does nothing where there are no process groups to speak of.
func Isolate(cmd *exec.Cmd) {}

func redrawLine() {}
