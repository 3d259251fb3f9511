//go:build !windows

package shareopen

import "os"

// OpenFile is os.OpenFile: Unix has no share modes.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}
