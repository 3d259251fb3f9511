package sessionlocks

import (
	"os"
	"path/filepath"
)

// openOpLockFile opens (creating if needed) the operation lock file of
// session id, refusing links (reparse points) in its place.
func openOpLockFile(stateDir, id string) (*os.File, error) {
	dir := filepath.Join(stateDir, opLockDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return nil, &FileError{Op: "mkdir", Path: dir, Err: err}
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		if err == nil {
			err = errNotRegular
		}
		return nil, &FileError{Op: "open", Path: dir, Err: err}
	}
	path := filepath.Join(dir, id+".lock")
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, &FileError{Op: "open", Path: path, Err: errNotRegular}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, &FileError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}
