package sessionlocks

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// Windows has no inode in os.FileInfo; a file's identity is its type, size
// and modification time, which is what a rewrite or replacement changes.
func fileIDOf(fi os.FileInfo) fileID {
	t := fi.ModTime()
	return fileID{msec: t.Unix(), mnsec: int32(t.Nanosecond()), size: fi.Size(), mode: fileTypeBits(fi.Mode())}
}

// openNoFollow opens a regular file for reading; links (reparse points) and
// anything that is not a disk file are refused.
func openNoFollow(path string) (*os.File, fileID, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fileID{}, err
	}
	id := fileIDOf(fi)
	if !fi.Mode().IsRegular() {
		return nil, id, errNotRegular
	}
	f, err := os.Open(path)
	return f, id, err
}

func lstatID(path string) (fileID, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileID{}, err
	}
	return fileIDOf(fi), nil
}

// probeHold opens the .hold with full sharing. A sharing violation means the
// holder opened it exclusively; otherwise a shared LockFileEx that fails
// immediately means the holder has it locked. A successful lock is released
// at once.
func probeHold(path string, want fileID) holdProbe {
	fi, err := os.Lstat(path)
	if err != nil {
		return holdProbe{err: err}
	}
	id := fileIDOf(fi)
	if !fi.Mode().IsRegular() {
		return holdProbe{id: id, err: errNotRegular}
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return holdProbe{err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		if errors.Is(err, windows.ERROR_SHARING_VIOLATION) {
			return holdProbe{held: true, id: id}
		}
		return holdProbe{id: id, err: err}
	}
	defer windows.CloseHandle(h)
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(h, windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	switch {
	case err == nil:
		windows.UnlockFileEx(h, 0, 1, 0, ol)
		return holdProbe{held: false, id: id}
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return holdProbe{held: true, id: id}
	}
	return holdProbe{id: id, err: err}
}

// removeInDir removes dir/name only if it is still the regular file want:
// moved aside under a private name first, checked there, and removed only
// if it is the one judged; otherwise moved back (never replacing a file
// that took the name meanwhile).
// remover removes files of one directory, by path.
type remover struct{ dir string }

func openRemover(dir string) remover { return remover{dir} }

func (rm remover) close() {}

func (rm remover) remove(name string, want fileID) error { return removeInDir(rm.dir, name, want) }

func removeInDir(dir, name string, want fileID) error {
	path := filepath.Join(dir, name)
	if err := checkFile(path, path, want); err != nil {
		return err
	}
	aside := filepath.Join(dir, privateName())
	if err := moveNoReplace(path, aside); err != nil {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	if err := checkFile(aside, path, want); err != nil {
		if merr := moveNoReplace(aside, path); merr != nil {
			return &os.PathError{Op: "remove", Path: path, Err: fmt.Errorf("%w; and it could not be put back (%v): it is %s", errChanged, merr, aside)}
		}
		return err
	}
	if err := os.Remove(aside); err != nil {
		moveNoReplace(aside, path)
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

func checkFile(p, path string, want fileID) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	if !fi.Mode().IsRegular() {
		return &os.PathError{Op: "remove", Path: path, Err: errNotRegular}
	}
	if fileIDOf(fi) != want {
		return &os.PathError{Op: "remove", Path: path, Err: errChanged}
	}
	return nil
}

// moveNoReplace renames from to to, failing if to exists (os.Rename would
// replace it).
func moveNoReplace(from, to string) error {
	f, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return err
	}
	t, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return err
	}
	return windows.MoveFileEx(f, t, 0)
}

func tryLock(f *os.File) error {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errLockBusy
	}
	return err
}

func unlockFile(f *os.File) {
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}

// terminate is not offered on Windows: there is no SIGTERM, and
// TerminateProcess would kill the CLI without letting it save its session.
func terminate(pid int) error { return errors.ErrUnsupported }

func readRegular(path string, limit int64) ([]byte, fileID, error) {
	f, id, err := openNoFollow(path)
	if err != nil {
		return nil, id, err
	}
	defer f.Close()
	b := make([]byte, 0, min(id.size+1, limit))
	b, err = readUpTo(f, b, limit)
	return b, id, err
}

func readUpTo(r io.Reader, b []byte, limit int64) ([]byte, error) {
	for int64(len(b)) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		want := int(min(int64(cap(b)), limit)) - len(b)
		n, err := r.Read(b[len(b) : len(b)+want])
		b = b[:len(b)+n]
		// A regular file reads short only at its end: no second read to
		// see EOF (one syscall per session on a cold scan).
		if err == io.EOF || n < want {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	return fileIDOf(fi), nil
}

// fileTypeBits keeps only the type bits of a mode, the part of identity that
// says "regular file" vs "FIFO".
func fileTypeBits(m os.FileMode) uint32 {
	t := uint32(m.Type())
	if t == 0 {
		return 1 // regular: non-zero so that fileID.exists() holds
	}
	return t
}

// dirStat lstat's names in one directory, by path.
type dirStat struct{ dir string }

func openDirStat(dir string) dirStat { return dirStat{dir} }

func (d dirStat) lstat(name string) (fileID, error) { return lstatID(filepath.Join(d.dir, name)) }

func (d dirStat) close() {}

// pidGone reports that no process has pid.
func pidGone(pid int) bool { return readProc(pid).state == procGone }
