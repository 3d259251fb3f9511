//go:build !unix

package watch

import (
	"os"
	"path/filepath"
)

// dirStat reads the modification times of the session directories for poll
// mode.
type dirStat struct{ dir string }

var closedDirStat = dirStat{}

func openDirStat(dir string) dirStat { return dirStat{dir: dir} }

func (d dirStat) close() {}

type statName = string

func newStatName(id string) statName { return id }

// mtime returns the modification time of the directory name, in nanoseconds,
// without following a symlink; false if it is not (or no longer) a directory.
func (d dirStat) mtime(name statName) (int64, bool) {
	if d.dir == "" {
		return 0, false
	}
	return dirMtime(filepath.Join(d.dir, name))
}

// dirMtime is mtime for a whole path.
func dirMtime(path string) (int64, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() {
		return 0, false
	}
	return fi.ModTime().UnixNano(), true
}

// gone reports whether the state dir has been removed; without a descriptor
// held open, the state dir's watch reports that by itself.
func (d dirStat) gone() bool { return false }

// dirIdentity has no inode to offer here: a directory that exists is taken
// to be the one watched (the engine makes the same assumption).
func dirIdentity(path string) (identity, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return identity{}, false
	}
	return identity{dev: 1}, true
}
