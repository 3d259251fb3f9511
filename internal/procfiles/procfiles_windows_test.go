package procfiles

// What live_test.go needs on Windows. Under Wine, whose Restart Manager is
// a stub, Openers must refuse, never answer "nobody".

import (
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// underWine reports whether this runs under Wine (ntdll exports
// wine_get_version there only).
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// refusedHere checks Openers' answer where it must refuse, and reports
// whether it had to.
func refusedHere(t *testing.T, procs []Process, err error) bool {
	t.Helper()
	if !underWine() {
		return false
	}
	if !errors.Is(err, errors.ErrUnsupported) || procs != nil {
		t.Fatalf("under Wine: Openers = %v, %v; want a refusal (its Restart Manager is a stub)", procs, err)
	}
	t.Logf("under Wine, as it must: %v", err)
	return true
}

func fileID(t *testing.T, path string) FileID {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &fi); err != nil {
		t.Fatal(err)
	}
	return FileID{Dev: uint64(fi.VolumeSerialNumber), Ino: uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow)}
}

// startOf is pid's creation time as the engine reads it (GetProcessTimes).
func startOf(t *testing.T, pid int) time.Time {
	t.Helper()
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &creation, &exit, &kernel, &user); err != nil {
		t.Fatal(err)
	}
	return time.Unix(0, creation.Nanoseconds())
}
