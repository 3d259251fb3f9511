package procfiles

// Windows: the Restart Manager (rstrtmgr.dll) names the processes that
// have a file open, with their start times, without walking every handle
// on the system as gopsutil's OpenFiles does.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	rstrtmgr                = windows.NewLazySystemDLL("rstrtmgr.dll")
	procRmStartSession      = rstrtmgr.NewProc("RmStartSession")
	procRmRegisterResources = rstrtmgr.NewProc("RmRegisterResources")
	procRmGetList           = rstrtmgr.NewProc("RmGetList")
	procRmEndSession        = rstrtmgr.NewProc("RmEndSession")
)

// errStub: Wine 8's Restart Manager lists nobody, which would read as
// "nobody has it open"; unlike a real one, it writes no session key.
var errStub = fmt.Errorf("%w: this system's Restart Manager is a stub (Wine's) that names no process, so who has a file open cannot be known", errors.ErrUnsupported)

func openers(ctx context.Context, path string, want FileID) (found, error) {
	if err := rstrtmgr.Load(); err != nil {
		return found{}, fmt.Errorf("%w: the Restart Manager cannot be loaded: %v", errors.ErrUnsupported, err)
	}
	if err := isFile(path, want); err != nil {
		return found{}, err
	}
	procs, err := restartManagerList(path)
	if err != nil {
		return found{}, err
	}
	return found{procs: procs}, isFile(path, want)
}

// restartManagerList returns the processes the Restart Manager says have
// path open.
func restartManagerList(path string) ([]Process, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	var session uint32
	key := make([]uint16, cchRMSessionKey+1)
	if r, _, _ := procRmStartSession.Call(uintptr(unsafe.Pointer(&session)), 0, uintptr(unsafe.Pointer(&key[0]))); r != 0 {
		return nil, fmt.Errorf("RmStartSession: %w", syscall.Errno(r))
	}
	defer procRmEndSession.Call(uintptr(session))
	if key[0] == 0 {
		return nil, errStub
	}
	names := []*uint16{name}
	if r, _, _ := procRmRegisterResources.Call(uintptr(session), 1, uintptr(unsafe.Pointer(&names[0])), 0, 0, 0, 0); r != 0 {
		return nil, fmt.Errorf("RmRegisterResources %s: %w", path, syscall.Errno(r))
	}
	// Asked again, larger, while processes open it faster than it answers.
	room := uint32(8)
	for range 4 {
		buf := make([]byte, int(room)*rmProcessInfoSize)
		needed, n, reasons := uint32(0), room, uint32(0)
		r, _, _ := procRmGetList.Call(uintptr(session), uintptr(unsafe.Pointer(&needed)), uintptr(unsafe.Pointer(&n)),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&reasons)))
		switch r {
		case 0:
			return decodeProcessInfo(buf, int(n))
		case errorMoreData:
			room = needed + 8
			continue
		}
		return nil, fmt.Errorf("RmGetList %s: %w", path, syscall.Errno(r))
	}
	return nil, fmt.Errorf("RmGetList %s: more processes have it open than it will list", path)
}

// isFile checks that path is the file want, through a handle opened for
// attributes only and closed before the Restart Manager looks.
func isFile(path string, want FileID) error {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer windows.CloseHandle(h)
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &fi); err != nil {
		return &os.PathError{Op: "GetFileInformationByHandle", Path: path, Err: err}
	}
	if uint64(fi.VolumeSerialNumber) != want.Dev || uint64(fi.FileIndexHigh)<<32|uint64(fi.FileIndexLow) != want.Ino {
		return fmt.Errorf("%s: %w", path, ErrChanged)
	}
	return nil
}

func executable(pid int) (string, error) {
	return "", fmt.Errorf("%w: on Windows gopsutil reads a process's executable", errors.ErrUnsupported)
}

func terminal(pid int) (string, error) {
	return "", fmt.Errorf("%w: Windows has no other process's console to read", errors.ErrUnsupported)
}
