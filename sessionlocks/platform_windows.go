package sessionlocks

// The Windows calls the portable engine rests on: file identities and stats,
// the .hold probe, removal that takes only the file judged, signals, and
// reading small files without following links.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/copilot-ide/sessionlocks/internal/shareopen"
	"golang.org/x/sys/windows"
)

// fileIDOf is fi's type, size and time; a regular file's identity (dev,
// ino) is read through a handle (fileIdentity).
func fileIDOf(fi os.FileInfo) fileID {
	t := fi.ModTime()
	return fileID{msec: t.Unix(), mnsec: int32(t.Nanosecond()), size: fi.Size(), mode: fileTypeBits(fi.Mode())}
}

// fileIdentity is the volume serial number and file index of the file h is
// open on: what dev and inode are on Unix.
func fileIdentity(h windows.Handle) (dev, ino uint64, err error) {
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		return 0, 0, err
	}
	return uint64(fi.VolumeSerialNumber), uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow), nil
}

// pathIdentity is fileIdentity of path, opened for its attributes only (no
// sharing mode refuses it, and it refuses none), links not followed.
func pathIdentity(path string) (dev, ino uint64, err error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, 0, err
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return 0, 0, err
	}
	defer windows.CloseHandle(h)
	return fileIdentity(h)
}

// openNoFollow opens a regular file for reading, with every share mode;
// links (reparse points) and anything that is not a disk file are refused.
func openNoFollow(path string) (*os.File, fileID, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fileID{}, err
	}
	id := fileIDOf(fi)
	if !fi.Mode().IsRegular() {
		return nil, id, errNotRegular
	}
	f, err := shareopen.Open(path)
	if err != nil {
		return nil, id, err
	}
	// No identity (an error) is none: sameFile then trusts the rest.
	id.dev, id.ino, _ = fileIdentity(windows.Handle(f.Fd()))
	return f, id, nil
}

// lstatID is os.Lstat as a fileID, a regular file's identity included.
func lstatID(path string) (fileID, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return fileID{}, err
	}
	id := fileIDOf(fi)
	if isRegular(id) {
		id.dev, id.ino, _ = pathIdentity(path)
	}
	return id, nil
}

// probeHold opens the .hold with full sharing: a sharing violation, or a
// shared LockFileEx that fails at once, means the holder has it. A file
// other than want (re-created since) is not touched, as on Unix.
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
			// The file judged, or one a CLI re-created: in use either way.
			id.dev, id.ino = want.dev, want.ino
			return holdProbe{held: true, id: id}
		}
		return holdProbe{id: id, err: err}
	}
	defer windows.CloseHandle(h)
	if id.dev, id.ino, err = fileIdentity(h); err != nil {
		return holdProbe{id: id, err: err}
	}
	if !sameFile(want, id) {
		return holdProbe{id: id, changed: true}
	}
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

// statID is os.Stat as a fileID, for the state dir. A file where it or a
// parent should be reads "not found" on Windows: here it is "not a
// directory", as on Unix, lest the state dir be taken for missing.
func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	switch {
	case err == nil && !fi.IsDir():
		return fileIDOf(fi), &os.PathError{Op: "open", Path: path, Err: errFileInPlace}
	case errors.Is(err, fs.ErrNotExist):
		for p := filepath.Dir(path); p != filepath.Dir(p); p = filepath.Dir(p) {
			if fi, serr := os.Stat(p); serr == nil {
				if !fi.IsDir() {
					err = &os.PathError{Op: "open", Path: p, Err: errFileInPlace}
				}
				break
			}
		}
		return fileID{}, err
	case err != nil:
		return fileID{}, err
	}
	return fileIDOf(fi), nil
}

// errFileInPlace: a file stands where a directory should be.
var errFileInPlace = errors.New("not a directory")

// fileTypeBits keeps only the type bits of a mode.
func fileTypeBits(m os.FileMode) uint32 {
	t := uint32(m.Type())
	if t == 0 {
		return 1 // regular: non-zero so that fileID.exists() holds
	}
	return t
}

// openDirNoFollow opens dir for listing, refusing a link in its place.
func openDirNoFollow(dir string) (*os.File, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() || fi.Mode()&os.ModeSymlink != 0 {
		return nil, &os.PathError{Op: "open", Path: dir, Err: errNotDir}
	}
	return shareopen.Open(dir)
}

// dirStat lstat's and removes names in one directory, by path (err is
// always nil here).
type dirStat struct {
	dir string
	err error
}

func openDirStat(dir string) dirStat { return dirStat{dir: dir} }

func (d dirStat) lstat(name string) (fileID, error) { return lstatID(filepath.Join(d.dir, name)) }

func (d dirStat) close() {}
