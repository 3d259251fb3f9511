package shareopen

import (
	"errors"
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// share is every share mode: others may read, write, rename and delete what is open here.
const share = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

// allowed is what OpenFile implements of os.OpenFile's flags: the access modes, O_CREATE and O_EXCL, and
// FILE_FLAG_OPEN_REPARSE_POINT in the flag's high bits (as os.OpenFile takes FILE_FLAG_* bits on Windows).
const allowed = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_EXCL | windows.FILE_FLAG_OPEN_REPARSE_POINT

// OpenFile is os.OpenFile with every share mode, for the flags in allowed; other flags are refused, not ignored.
// Opened for reading only, a directory opens too (FILE_FLAG_BACKUP_SEMANTICS), as with os.OpenFile.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if flag&^allowed != 0 {
		return nil, &os.PathError{Op: "open", Path: name, Err: errors.New("shareopen: unsupported flag")}
	}
	if name == "" {
		return nil, &os.PathError{Op: "open", Path: name, Err: windows.ERROR_FILE_NOT_FOUND}
	}
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	var access uint32 = windows.GENERIC_READ
	attrs := uint32(flag) & windows.FILE_FLAG_OPEN_REPARSE_POINT
	switch flag & (os.O_WRONLY | os.O_RDWR) {
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	default:
		attrs |= windows.FILE_FLAG_BACKUP_SEMANTICS // a directory opens only with it
	}
	var create uint32 = windows.OPEN_EXISTING
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		create = windows.CREATE_NEW
		attrs |= windows.FILE_FLAG_OPEN_REPARSE_POINT // as os.OpenFile: never create through a link
	case flag&os.O_CREATE != 0:
		create = windows.OPEN_ALWAYS
	}
	if flag&os.O_CREATE != 0 {
		access |= windows.GENERIC_WRITE
	}
	if perm&0o200 == 0 {
		attrs |= windows.FILE_ATTRIBUTE_READONLY // as os.OpenFile, for a file it creates
	} else {
		attrs |= windows.FILE_ATTRIBUTE_NORMAL
	}
	h, err := windows.CreateFile(p, access, share, nil, create, attrs, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}

// OpenFileIn opens name, one component, in the directory dir is open on, as OpenFile opens a path, with these
// differences: the name is looked up in that directory itself (NtCreateFile relative to its handle), so a link
// swapped in for the directory meanwhile cannot send the open elsewhere; and a link (reparse point) named name is
// refused, not followed. Windows only: Unix has openat.
func OpenFileIn(dir *os.File, name string, flag int, perm os.FileMode) (*os.File, error) {
	path := dir.Name() + `\` + name
	if flag&^(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_EXCL) != 0 || name == "" || name == "." || name == ".." || strings.ContainsAny(name, `\/:`) {
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("shareopen: unsupported flag or not one name")}
	}
	uname, err := windows.NewNTUnicodeString(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	oa := &windows.OBJECT_ATTRIBUTES{RootDirectory: windows.Handle(dir.Fd()), ObjectName: uname}
	oa.Length = uint32(unsafe.Sizeof(*oa))
	var access uint32 = windows.GENERIC_READ
	switch flag & (os.O_WRONLY | os.O_RDWR) {
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	var disposition uint32 = windows.FILE_OPEN
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		disposition = windows.FILE_CREATE
	case flag&os.O_CREATE != 0:
		disposition = windows.FILE_OPEN_IF
	}
	var attrs uint32 = windows.FILE_ATTRIBUTE_NORMAL
	if perm&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	var h windows.Handle
	err = windows.NtCreateFile(&h, access|windows.SYNCHRONIZE, oa, &windows.IO_STATUS_BLOCK{}, nil, attrs, share,
		disposition, windows.FILE_NON_DIRECTORY_FILE|windows.FILE_SYNCHRONOUS_IO_NONALERT|windows.FILE_OPEN_REPARSE_POINT, 0, 0)
	if err != nil {
		if st, ok := err.(windows.NTStatus); ok {
			err = st.Errno()
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil || fi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		if err == nil {
			err = errors.New("a link (reparse point), not followed")
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
