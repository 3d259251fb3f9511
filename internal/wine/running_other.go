//go:build !windows

package wine

// Running reports whether this process runs under Wine: never, on a system other than Windows.
func Running() bool { return false }
