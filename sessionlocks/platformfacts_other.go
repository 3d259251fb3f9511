//go:build !linux && !darwin && !windows

package sessionlocks

import "errors"

func nestedPIDNamespace() bool { return false }

// fsType is not read here: the state dir counts as local.
func fsType(dir string) (string, bool, error) {
	return "", false, errors.New("file-system type not read on this platform")
}
