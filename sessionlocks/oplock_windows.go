package sessionlocks

// The CLI's per-session operation lock on Windows: LockFileEx on the file the CLI names, opened with every share
// mode and never through a link.

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/copilot-ide/sessionlocks/internal/shareopen"
	"golang.org/x/sys/windows"
)

// openOpLockFile opens (creating if needed) the operation lock file of session id, relative to the
// .session-operation-locks directory's own handle, which is not a link (one in its place is refused). The file is
// named after the session directory as the disk names it: Windows drops a trailing dot and NTFS ignores case, so
// "ABC." reaches the session "abc", whose CLI locks abc.lock.
func openOpLockFile(stateDir, id string) (*os.File, error) {
	dirPath := filepath.Join(stateDir, opLockDir)
	if err := os.Mkdir(dirPath, 0o700); err != nil && !os.IsExist(err) {
		return nil, &FileError{Op: "mkdir", Path: dirPath, Err: err}
	}
	if testHookOpLockDir != nil {
		testHookOpLockDir(dirPath)
	}
	dir, err := shareopen.OpenFile(dirPath, os.O_RDONLY|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &FileError{Op: "open", Path: dirPath, Err: err}
	}
	defer dir.Close()
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(dir.Fd()), &fi); err != nil {
		return nil, &FileError{Op: "open", Path: dirPath, Err: err}
	}
	if fi.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 || fi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		err := fmt.Errorf("not a directory (a link or a file stands in its place): %w", errNotRegular)
		return nil, &FileError{Op: "open", Path: dirPath, Err: err}
	}
	name := diskName(stateDir, id) + ".lock"
	f, err := shareopen.OpenFileIn(dir, name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, &FileError{Op: "open", Path: filepath.Join(dirPath, name), Err: err}
	}
	return f, nil
}

// diskName is the name the directory dir\name has on disk (the CLI's spelling), or name if it cannot be found.
func diskName(dir, name string) string {
	p, err := windows.UTF16PtrFromString(filepath.Join(dir, name))
	if err != nil {
		return name
	}
	var fd windows.Win32finddata
	h, err := windows.FindFirstFile(p, &fd) // ValidateID let no wildcard through
	if err != nil {
		return name
	}
	windows.FindClose(h)
	return windows.UTF16ToString(fd.FileName[:])
}
