package sessionlocks

// Where this process judges from: a CLI's pid means nothing from inside a
// PID namespace of its own (a Flatpak-packaged IDE), nor from another
// machine sharing the state dir over the network.

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
	var err error
	if p.FileSystem, p.Shared, err = fileSystemOf(e.dir); err != nil {
		e.log.Debug("state dir file system unknown", "dir", e.dir, "err", err)
	}
	return p
}

// Platform is what the engine can see from where it runs.
type Platform struct {
	// NestedPIDNamespace: this process runs in a PID namespace below the
	// machine's first, and processes outside it are invisible.
	NestedPIDNamespace bool
	FileSystem         string // the state dir's ("ext4", "nfs"); "" when unknown
	// Shared: other machines may write that file system (NFS, SMB, 9p, FUSE).
	Shared bool
}

// sharedFS names the file-system types other machines may write: network
// file systems, VM and WSL shares, and FUSE (sshfs cannot be told apart).
var sharedFS = map[string]bool{
	"nfs": true, "nfs4": true, "cifs": true, "smb": true, "smb2": true, "smb3": true, "smbfs": true,
	"9p": true, "fuse": true, "virtiofs": true, "ceph": true, "afs": true, "coda": true, "gfs2": true,
	"ocfs2": true, "lustre": true, "gpfs": true, "glusterfs": true, "vboxsf": true, "prl_fs": true, "webdav": true,
	"afpfs": true, "ncpfs": true, "orangefs": true, "macfuse": true, "osxfuse": true, "fusefs": true,
}

// isSharedFS reports whether a file-system type name is one other machines
// may write; FUSE subtypes ("fuse.sshfs") count as FUSE.
func isSharedFS(name string) bool {
	name, _, _ = strings.Cut(strings.ToLower(name), ".") // no key is "" or starts with "."
	return sharedFS[name]
}

// fileSystemOf reads the file-system type of dir, or of its nearest
// existing ancestor, where the CLI will create it.
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
