//go:build !linux

package sessionlocks

// Reading session directories elsewhere than Linux: the portable reader.

type dirReader = portableDirReader

func newDirReader(stateDir string) *dirReader { return &dirReader{} }

func readSessionIDs(dir string, add func([]string)) error { return readSessionIDsPortable(dir, add) }
