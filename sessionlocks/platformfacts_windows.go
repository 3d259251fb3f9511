package sessionlocks

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// Windows has no PID namespaces a desktop app runs in.
func nestedPIDNamespace() bool { return false }

// fsType: a UNC path (\\server\share, \\?\UNC\...) or a drive Windows calls
// remote is a network share; \\?\C:\... and \\.\C:\... are drive C:.
func fsType(dir string) (string, bool, error) {
	vol := filepath.VolumeName(dir)
	if p := strings.ReplaceAll(dir, "/", `\`); strings.HasPrefix(p, `\\?\`) || strings.HasPrefix(p, `\\.\`) {
		if strings.HasPrefix(strings.ToUpper(p[4:]), `UNC\`) {
			return "smb", true, nil
		}
		if drive := filepath.VolumeName(p[4:]); drive != "" {
			vol = drive
		}
	} else if strings.HasPrefix(vol, `\\`) {
		return "smb", true, nil
	}
	root, err := windows.UTF16PtrFromString(vol + `\`)
	if err != nil {
		return "", false, err
	}
	if windows.GetDriveType(root) == windows.DRIVE_REMOTE {
		return "smb", true, nil
	}
	var name [windows.MAX_PATH + 1]uint16
	if err := windows.GetVolumeInformation(root, nil, 0, nil, nil, nil, &name[0], uint32(len(name))); err != nil {
		return "", false, err
	}
	return strings.ToLower(windows.UTF16ToString(name[:])), false, nil
}
