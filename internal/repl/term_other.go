//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly && !windows

package repl

// Elsewhere the REPL treats its input as a script: no line editing, no colour.
func isTerminal(fd uintptr) bool { return false }
