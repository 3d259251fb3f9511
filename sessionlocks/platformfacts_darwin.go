package sessionlocks

import (
	"os"

	"golang.org/x/sys/unix"
)

// macOS has no PID namespaces.
func nestedPIDNamespace() bool { return false }

// fsType: statfs names the type, and MNT_LOCAL says whether the kernel
// counts it as local (NFS, SMB, AFP and WebDAV mounts are not).
func fsType(dir string) (string, bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", false, &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	n := 0
	for n < len(st.Fstypename) && st.Fstypename[n] != 0 {
		n++
	}
	name := string(st.Fstypename[:n])
	return name, st.Flags&unix.MNT_LOCAL == 0 || isSharedFS(name), nil
}
