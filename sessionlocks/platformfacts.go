package sessionlocks

// Where this process judges from: what it can and cannot see. A CLI's pid
// means something only to a process on the same kernel that can see it:
// not from inside a PID namespace of its own (a Flatpak-packaged IDE), and
// not from another machine sharing the state dir over the network. There,
// "no such process" and "another process has that pid" prove nothing.

import (
	"os"
	"path/filepath"
	"strings"
)

// platform is where the engine judges from, with the state dir's file
// system read now.
func (e *Engine) platform() Platform {
	p := Platform{NestedPIDNamespace: e.nestedNS}
	if e.fsType != "" {
		p.FileSystem, p.Shared = e.fsType, isSharedFS(e.fsType)
		return p
	}
	name, shared, err := fileSystemOf(e.dir)
	if err != nil {
		e.log.Debug("state dir file system unknown", "dir", e.dir, "err", err)
	}
	p.FileSystem, p.Shared = name, shared
	return p
}

// Platform is what the engine can see from where it runs.
type Platform struct {
	// NestedPIDNamespace is true when this process runs in a PID namespace
	// below the machine's first (a sandbox or container): processes outside
	// it are invisible here.
	NestedPIDNamespace bool
	// FileSystem is the state dir's file-system type ("ext4", "nfs", ...),
	// or "" when it could not be read.
	FileSystem string
	// Shared is true when that file system may be written by other machines
	// (NFS, SMB, 9p, FUSE, ...), whose pids mean nothing here and whose
	// changes file notifications do not report.
	Shared bool
}

// sharedFS names the file-system types other machines may write: network
// file systems, VM and WSL shares, and FUSE, which may be any of them
// (sshfs) and cannot be told apart by type.
var sharedFS = map[string]bool{
	"nfs": true, "nfs4": true, "cifs": true, "smb": true, "smb2": true, "smb3": true, "smbfs": true,
	"9p": true, "fuse": true, "virtiofs": true, "ceph": true, "afs": true, "coda": true, "gfs2": true,
	"ocfs2": true, "lustre": true, "gpfs": true, "glusterfs": true, "vboxsf": true, "prl_fs": true, "webdav": true,
	"afpfs": true, "ncpfs": true, "orangefs": true, "macfuse": true, "osxfuse": true, "fusefs": true,
}

// isSharedFS reports whether a file-system type name is one other machines
// may write; FUSE subtypes ("fuse.sshfs") count as FUSE.
func isSharedFS(name string) bool {
	name = strings.ToLower(name)
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	return sharedFS[name]
}

// fileSystemOf reads the file-system type of dir, or of its nearest
// existing ancestor when dir does not exist yet (the state dir before the
// first CLI ran): the CLI will create it there.
func fileSystemOf(dir string) (name string, shared bool, err error) {
	for {
		name, shared, err = fsType(dir)
		if err == nil || !os.IsNotExist(err) {
			return name, shared, err
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", false, err
		}
		dir = up
	}
}
