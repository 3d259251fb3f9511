package sessionlocks

import (
	"bytes"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// initPIDNamespace is the inode the kernel gives the machine's first PID
// namespace (PROC_PID_INIT_INO), fixed since Linux 3.8.
const initPIDNamespace = 0xEFFFFFFC

// nestedPIDNamespace reports whether this process runs in a PID namespace
// below the machine's first: the namespace's inode tells even where a
// sandbox mounts its own /proc (whose NSpid line, the fallback, shows one).
func nestedPIDNamespace() bool {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/pid", &st); err == nil {
		return st.Ino != initPIDNamespace
	}
	b, err := readStatus(unix.Getpid())
	if err != nil {
		return false
	}
	v, ok := statusField(b, "NSpid:")
	return ok && len(bytes.Fields(v)) > 1
}

// linuxFS names the statfs magic numbers of every shared file system and
// the common local ones.
var linuxFS = map[int64]string{
	0x6969:     "nfs",
	0x517B:     "smb",
	0xFF534D42: "cifs",
	0xFE534D42: "smb2",
	0x01021997: "9p",
	0x65735546: "fuse", // also virtiofs
	0x00C36400: "ceph",
	0x5346414F: "afs",
	0x6B414653: "afs",
	0x73757245: "coda",
	0x01161970: "gfs2",
	0x7461636F: "ocfs2",
	0x0BD00BD0: "lustre",
	0x47504653: "gpfs",
	0x786F4256: "vboxsf",
	0x7C7C6673: "prl_fs", // Parallels shared folders
	0x20030528: "orangefs",
	0x564C:     "ncpfs",
	0xEF53:     "ext4",
	0x9123683E: "btrfs",
	0x58465342: "xfs",
	0x01021994: "tmpfs",
	0x794C7630: "overlay",
	0x2FC12FC1: "zfs",
	0xF2F52010: "f2fs",
	0xCA451A4E: "bcachefs",
	0x4D44:     "vfat",
	0x2011BAB0: "exfat",
	0x5346544E: "ntfs",
	0x7366746E: "ntfs3",
	0xF15F:     "ecryptfs",
	0x858458F6: "ramfs",
}

func fsType(dir string) (string, bool, error) {
	var st unix.Statfs_t
	if err := noEINTR(func() error { return unix.Statfs(dir, &st) }); err != nil {
		return "", false, &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	name, ok := linuxFS[int64(uint32(st.Type))]
	if !ok {
		name = fmt.Sprintf("0x%x", uint32(st.Type))
	}
	return name, isSharedFS(name), nil
}
