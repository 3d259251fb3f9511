package sessionlocks

// From a session directory's inuse.* files to its holders (lockRef): the
// files a listing found, kept compact, and the holders made from them with
// their files lstat'ed, all at once for a session of a few, a batch at a
// time for a huge one.

import (
	"cmp"
	"slices"
)

// lockFile is one inuse.* file a directory listing found. Its name is made
// again from pid and kind: parseLockName admits only the names that
// lockFileName and holdFileName make, so nothing is lost, and a directory
// of 100,000 locks keeps 8 bytes a file rather than a string.
type lockFile struct {
	pid  int32
	hold bool
}

// lockFileOf is the lockFile a name denotes, if it is an inuse.* name.
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

// sortLockFiles orders files by pid, a .lock before its .hold: each holder
// is then a run of one pid.
func sortLockFiles(files []lockFile) {
	slices.SortFunc(files, func(a, b lockFile) int {
		if c := cmp.Compare(a.pid, b.pid); c != 0 {
			return c
		}
		return cmp.Compare(b2i(a.hold), b2i(b.hold))
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nextHolder is where the holder after the one beginning at files[i]
// begins, in sorted files.
func nextHolder(files []lockFile, i int) int {
	j := i + 1
	for j < len(files) && files[j].pid == files[i].pid {
		j++
	}
	return j
}

// countHolders is how many holders sorted files name (some may have gone
// since the listing).
func countHolders(files []lockFile) int {
	n := 0
	for i := 0; i < len(files); i = nextHolder(files, i) {
		n++
	}
	return n
}

// lockRefs makes the holders that sorted files name, lstat'ing each file
// relative to the session directory (opened once): the identity is part of
// the probe cache's key and what a later removal checks against. Holders
// whose files have gone since the listing are left out.
func (e *Engine) lockRefs(id, dir string, files []lockFile) []lockRef {
	if len(files) == 0 {
		return nil
	}
	st := openDirStat(dir)
	defer st.close()
	var buf []byte
	refs := make([]lockRef, 0, countHolders(files))
	for i := 0; i < len(files); i = nextHolder(files, i) {
		if r, ok := refAt(id, dir, files, i, st, &buf); ok {
			refs = append(refs, r.withKeyPath())
		}
	}
	return refs
}

// refAt makes the holder whose files begin at files[i], lstat'ed through
// st (buf is scratch for the name); ok is false when nothing of it is left
// that the CLI could have made: both files gone, or a .hold that is not a
// regular file and no .lock.
func refAt(id, dir string, files []lockFile, i int, st dirStat, buf *[]byte) (lockRef, bool) {
	r := lockRef{sessionID: id, dir: dir, pid: int(files[i].pid)}
	for j := i; j < len(files) && files[j].pid == files[i].pid; j++ {
		fid, _ := st.lstatZ(files[j].name(), buf) // a name gone since is a zero fileID
		if files[j].hold {
			r.hold = fid
		} else {
			r.lock = fid
		}
	}
	switch {
	case !r.lock.exists() && !r.hold.exists():
		return r, false
	case r.hold.exists() && !isRegular(r.hold) && !r.lock.exists():
		return r, false
	case r.hold.exists() && !isRegular(r.hold):
		r.hold = fileID{}
	}
	return r, true
}
