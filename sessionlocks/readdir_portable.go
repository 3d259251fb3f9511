package sessionlocks

// Reading session directories by path, with the os package: the reader of
// every system but Linux, and on Linux the baseline its benchmark compares
// the descriptor-relative getdents reader with.

import (
	"io"
	"io/fs"
	"os"
)

// portableDirReader reads session directories by path.
type portableDirReader struct{}

func (r *portableDirReader) close() {}

// stat is lstat of the session directory dir.
func (r *portableDirReader) stat(dir, id string) (fileID, error) { return lstatID(dir) }

// read lists the session directory dir: its identity, taken before the
// listing so that a change during it shows as a newer mtime next time; its
// inuse.* names; and workspace.yaml's bytes and identity. A symlink or
// non-directory gives errNotDir: sessions are never followed through links.
func (r *portableDirReader) read(dir, id string) (sd sessionDir, err error) {
	if sd.id, err = lstatID(dir); err != nil {
		return sd, err
	}
	if sd.id.mode != uint32(fs.ModeDir) {
		return sd, errNotDir
	}
	f, err := os.Open(dir)
	if err != nil {
		return sd, err
	}
	defer f.Close()
	all, err := f.Readdirnames(-1)
	if err != nil {
		return sd, err
	}
	for _, n := range all {
		if f, ok := lockFileOf(n); ok {
			sd.files = append(sd.files, f)
		} else if n == "workspace.yaml" {
			sd.hasMeta = true
		}
	}
	sortLockFiles(sd.files)
	if sd.hasMeta {
		sd.meta, sd.metaID, sd.metaErr = readRegular(dir+string(os.PathSeparator)+"workspace.yaml", maxWorkspaceYAML)
	}
	return sd, nil
}

// readSessionIDsPortable lists the names in the state dir that may be sessions,
// handing them to add: valid ids of directories (or of entries of irregular
// type; the session scan finds out). add may keep nothing of the slice.
func readSessionIDsPortable(dir string, add func([]string)) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(idBatch)
		batch := make([]string, 0, len(ents))
		for _, de := range ents {
			name := de.Name()
			if t := de.Type(); (t.IsDir() || t == fs.ModeIrregular) && name[0] != '.' && ValidateID(name) == nil {
				batch = append(batch, name)
			}
		}
		add(batch)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
