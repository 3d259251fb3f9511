//go:build !unix && !windows

package repl

import "os/exec"

// Isolate does nothing where there are no process groups to speak of.
func Isolate(cmd *exec.Cmd) {}

func redrawLine() {}
