package sessionlocks

// Reading one session directory: its inuse.* files, the files a removal set
// aside, workspace.yaml's metadata and where the session was written, kept
// as a snapshot valid while a stat shows the directory unchanged.

import (
	"errors"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"time"
)

// dirSnapshot is what one read of a session directory found.
type dirSnapshot struct {
	dir     fileID     // the directory, as it was before it was read
	readAt  time.Time  // when its names were read
	files   []lockFile // its inuse.* files, sorted: a holder is a run of one pid
	aside   bool       // a removal's set-aside file is there (see recover.go)
	meta    metadata
	metaID  fileID    // workspace.yaml as parsed; zero when absent
	metaAt  time.Time // when it was read
	metaErr bool      // workspace.yaml is there but could not be read: read again next time
	writtenOn
}

// racyWindow is how long after a change an mtime may still hide a second
// change (timestamps are coarse: 2 s on FAT); a snapshot read within it of
// the mtime it saw is not reused.
const racyWindow = 2 * time.Second

// unchanged reports whether what was read at readAt of a file whose
// identity was then was still stands, its identity being now.
func unchanged(was, now fileID, readAt time.Time) bool {
	return was.exists() && was == now && readAt.Sub(now.modTime()) >= racyWindow
}

// readSessionDir reads the session directory dir, reusing what prev (the
// last snapshot, or nil) found where nothing changed. A symlink or a file
// in a session's place gives errNotDir.
func (e *Engine) readSessionDir(dir string, prev *dirSnapshot) (*dirSnapshot, error) {
	id, err := lstatID(dir)
	if err != nil {
		return nil, err
	}
	if id.mode != uint32(fs.ModeDir) {
		return nil, errNotDir
	}
	now := e.now()
	s := &dirSnapshot{dir: id, readAt: now}
	reuse := prev != nil && unchanged(prev.dir, id, prev.readAt)
	if reuse {
		// The CLI renames workspace.yaml into place, which changes the
		// directory: one stat validates the whole snapshot.
		s.files, s.aside, s.readAt = prev.files, prev.aside, prev.readAt
		s.meta, s.metaID, s.metaAt = prev.meta, prev.metaID, prev.metaAt
	} else if err := s.readNames(dir); err != nil {
		return nil, err
	}
	if !reuse || prev.metaErr {
		e.readMeta(dir, s, prev, now)
	}
	if len(s.files) > 0 {
		s.writtenOn = readWrittenOn(dir, s.meta.CWD, runtime.GOOS, prev)
	}
	return s, nil
}

// readNames lists the directory's names: inuse.* files and set-aside files.
func (s *dirSnapshot) readNames(dir string) error {
	f, err := openDirNoFollow(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		if lf, ok := lockFileOf(n); ok {
			s.files = append(s.files, lf)
		} else if isAsideName(n) && !isUnlinked(filepath.Join(dir, n)) {
			s.aside = true
		}
	}
	sortLockFiles(s.files)
	return nil
}

// readMeta reads workspace.yaml unless it is the file prev parsed.
func (e *Engine) readMeta(dir string, s, prev *dirSnapshot, now time.Time) {
	path := filepath.Join(dir, "workspace.yaml")
	if prev != nil {
		if id, err := lstatID(path); err == nil && unchanged(prev.metaID, id, prev.metaAt) {
			s.meta, s.metaID, s.metaAt = prev.meta, prev.metaID, prev.metaAt
			return
		}
	}
	s.metaAt = now
	b, id, err := readRegular(path, maxWorkspaceYAML)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	m := metadata{}
	if err == nil {
		m, err = parseMetadata(b)
	}
	if err != nil || id.size == 0 {
		s.metaErr = true
		e.log.Debug("workspace.yaml unreadable or empty", "dir", dir, "err", err)
		if prev != nil {
			// Caught mid-rewrite: what it said before stands, and it is read again.
			s.meta = prev.meta
		}
		return
	}
	s.meta, s.metaID = m, id
}

// sessionOf makes the Session a snapshot describes, without its holders.
func sessionOf(id, dir string, s *dirSnapshot) Session {
	m := s.meta
	out := Session{ID: id, Dir: dir, Name: m.Name, CWD: m.CWD, Repository: m.Repository, Branch: m.Branch,
		ClientName: m.ClientName, CreatedAt: m.created, UpdatedAt: m.updated}
	if out.UpdatedAt.IsZero() {
		out.UpdatedAt = s.dir.modTime()
		if t := s.metaID.modTime(); s.metaID.exists() && t.After(out.UpdatedAt) {
			out.UpdatedAt = t
		}
	}
	if out.Repository == "" {
		out.Repository = m.GitRoot
	}
	return out
}

// lockFile is one inuse.* file as its pid and kind (parseLockName admits
// only the names lockFileName and holdFileName make): 8 bytes a file.
type lockFile struct {
	pid  int32
	hold bool
}

func lockFileOf(name string) (lockFile, bool) {
	pid, kind, ok := parseLockName(name)
	return lockFile{pid: int32(pid), hold: kind == "hold"}, ok
}

func (f lockFile) name() string {
	if f.hold {
		return holdFileName(int(f.pid))
	}
	return lockFileName(int(f.pid))
}

// sortLockFiles orders files by pid, a .lock before its .hold.
func sortLockFiles(files []lockFile) {
	slices.SortFunc(files, func(a, b lockFile) int {
		if a.pid != b.pid {
			return int(a.pid - b.pid)
		}
		if a.hold == b.hold {
			return 0
		}
		if b.hold {
			return -1
		}
		return 1
	})
}

// holderStarts returns where each holder's run begins in sorted files.
func holderStarts(files []lockFile) []int {
	var out []int
	for i := range files {
		if i == 0 || files[i].pid != files[i-1].pid {
			out = append(out, i)
		}
	}
	return out
}

// lockRef is one holder as a directory read found it, its files lstat'ed.
type lockRef struct {
	sessionID string
	dir       string
	pid       int
	lock      fileID // zero if there is no .lock
	hold      fileID // zero if there is no .hold, or it is not a regular file
	err       error  // its files could not be lstat'ed (out of descriptors, say): never "gone"
}

func (r lockRef) lockPath() string { return filepath.Join(r.dir, lockFileName(r.pid)) }
func (r lockRef) holdPath() string { return filepath.Join(r.dir, holdFileName(r.pid)) }

// refAt makes the holder whose files begin at files[i], lstat'ed through
// st; ok is false when nothing a CLI could have made is left of it.
func refAt(id, dir string, files []lockFile, i int, st dirStat) (lockRef, bool) {
	r := lockRef{sessionID: id, dir: dir, pid: int(files[i].pid)}
	for j := i; j < len(files) && files[j].pid == files[i].pid; j++ {
		fid, err := st.lstat(files[j].name()) // gone since the read: a zero fileID
		if err != nil && !errors.Is(err, fs.ErrNotExist) && r.err == nil {
			r.err = err
		}
		if files[j].hold {
			r.hold = fid
		} else {
			r.lock = fid
		}
	}
	if r.hold.exists() && !isRegular(r.hold) {
		r.hold = fileID{} // a FIFO or link named like a .hold: no CLI made it
	}
	return r, r.lock.exists() || r.hold.exists() || r.err != nil
}
