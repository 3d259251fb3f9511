package sessionlocks

import (
	"bytes"
	"os"
	"unsafe"

	"github.com/copilot-ide/sessionlocks/internal/getdents"
	"golang.org/x/sys/unix"
)

// dirReader reads session directories for one scan worker; it is not safe
// for concurrent use. On Linux it opens each session directory relative to
// a descriptor of the state dir, takes the directory's identity from the
// open descriptor, lists it with getdents64 and opens workspace.yaml
// relative to it: the kernel then walks one path component per call
// instead of the whole state-dir path, and nothing is allocated for the
// dozen names a session holds that are not locks. A cold scan of 10,000
// sessions is mostly these calls (measured: 27% less kernel time than
// the same calls on absolute paths).
type dirReader struct {
	stateDir string
	opened   bool
	base     int // the state dir's descriptor, or -1: names are then full paths
	dents    []byte
	meta     []byte
	zname    []byte // the name being opened, NUL-terminated for openZ
}

// newDirReader returns a reader that opens stateDir for relative lookups
// when first used. If it cannot, the reader falls back to full paths, and
// the per-session calls report the error the caller knows how to blame.
func newDirReader(stateDir string) *dirReader {
	return &dirReader{stateDir: stateDir, base: -1}
}

func (r *dirReader) close() {
	if r.base >= 0 {
		unix.Close(r.base)
		r.base = -1
	}
}

// at opens the state dir on first use (a watched listing reads no
// directory at all, and should not pay for opening one).
func (r *dirReader) at(dir, id string) (int, string) {
	if !r.opened {
		r.opened = true
		r.dents, r.meta = make([]byte, 8192), make([]byte, 4096)
		if r.stateDir != "" {
			if fd, err := openNoIntr(unix.AT_FDCWD, r.stateDir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC); err == nil {
				r.base = fd
			}
		}
	}
	if r.base >= 0 {
		return r.base, id
	}
	return unix.AT_FDCWD, dir
}

// openZ is openNoIntr for a NUL-terminated name. unix.Openat copies its
// name into a new allocation on every call, and a cold scan opens two
// names per session.
func openZ(at int, zname []byte, flags int) (int, error) {
	for {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(at), uintptr(unsafe.Pointer(&zname[0])), uintptr(flags), 0, 0, 0)
		switch errno {
		case 0:
			return int(fd), nil
		case unix.EINTR:
			continue
		}
		return -1, errno
	}
}

var workspaceYAMLZ = []byte("workspace.yaml\x00")

// stat is lstat of the session directory dir (named id in the state dir).
func (r *dirReader) stat(dir, id string) (fileID, error) {
	at, name := r.at(dir, id)
	var st unix.Stat_t
	for {
		err := unix.Fstatat(at, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fileID{}, &os.PathError{Op: "lstat", Path: dir, Err: err}
		}
		return statToID(&st), nil
	}
}

// read lists the session directory dir: its identity, taken before the
// listing so that a change during it shows as a newer mtime next time; its
// inuse.* names; and workspace.yaml's bytes (valid until the next call)
// and identity. A symlink or non-directory gives errNotDir: sessions are
// never followed through links.
func (r *dirReader) read(dir, id string) (sd sessionDir, err error) {
	at, name := r.at(dir, id)
	r.zname = append(append(r.zname[:0], name...), 0)
	fd, err := openZ(at, r.zname, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return sd, errNotDir
		}
		return sd, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return sd, &os.PathError{Op: "fstat", Path: dir, Err: err}
	}
	sd.id = statToID(&st)
	hasMeta := false
	err = getdents.Each(fd, r.dents, func(name []byte, typ uint8, ino uint64) {
		switch {
		case bytes.HasPrefix(name, []byte("inuse.")):
			if f, ok := lockFileOf(string(name)); ok {
				sd.files = append(sd.files, f)
			}
		case string(name) == "workspace.yaml":
			hasMeta = true
		}
	})
	if err != nil {
		return sd, &os.PathError{Op: "read", Path: dir, Err: err}
	}
	sortLockFiles(sd.files)
	if hasMeta {
		sd.hasMeta = true
		sd.meta, sd.metaID, sd.metaErr = r.readMeta(fd, dir)
	}
	return sd, nil
}

func (r *dirReader) readMeta(dirfd int, dir string) ([]byte, fileID, error) {
	fd, err := openZ(dirfd, workspaceYAMLZ, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC)
	if err != nil {
		if err == unix.ELOOP {
			return nil, fileID{}, errNotRegular
		}
		return nil, fileID{}, &os.PathError{Op: "open", Path: dir + string(os.PathSeparator) + "workspace.yaml", Err: err}
	}
	defer unix.Close(fd)
	b, id, err := readRegularFd(fd, "", maxWorkspaceYAML, r.meta[:0])
	if pe, ok := err.(*os.PathError); ok {
		pe.Path = dir + string(os.PathSeparator) + "workspace.yaml" // named only when needed: it costs an allocation
	}
	if cap(b) > cap(r.meta) && cap(b) <= 64<<10 {
		r.meta = b[:0]
	}
	return b, id, err
}

// readSessionIDs lists the names in the state dir that may be sessions,
// handing them to add in batches as they are read: valid ids of directories
// (or of entries whose type the file system does not tell; the session scan
// finds out). getdents64 read here allocates nothing for the names it
// skips, and one string for each id. add may keep nothing of the slice.
func readSessionIDs(dir string, add func([]string)) error {
	fd, err := openNoIntr(unix.AT_FDCWD, dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	batch := make([]string, 0, idBatch)
	err = getdents.Each(fd, make([]byte, 64<<10), func(name []byte, typ uint8, _ uint64) {
		if (typ == unix.DT_DIR || typ == unix.DT_UNKNOWN) && name[0] != '.' && validID(name) {
			if batch = append(batch, string(name)); len(batch) == idBatch {
				add(batch)
				batch = batch[:0]
			}
		}
	})
	if err != nil {
		return &os.PathError{Op: "read", Path: dir, Err: err}
	}
	add(batch)
	return nil
}
