//go:build !linux

package sessionlocks

import "errors"

// readKernelLocks: only Linux lists the machine's file locks with their
// owners (/proc/locks). Elsewhere the .hold probe alone tells whether a lock
// is held, and nothing says by whom.
func readKernelLocks() (kernelLocks, error) {
	return kernelLocks{}, errors.New("this platform does not list file locks with their owners")
}
