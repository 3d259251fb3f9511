package sessionlocks

// The kernel's table of file locks, as far as the platform shows it (Linux:
// /proc/locks; elsewhere nothing), and the lookups judging makes in it.

// lockKind is the family of a kernel file lock.
type lockKind uint8

const (
	lockFlock lockKind = iota + 1 // flock(2): what the CLI holds on its .hold
	lockPOSIX                     // fcntl(2) record locks: SQLite's on session.db
	lockOFD                       // open-file-description locks: owned by no process
)

// kernelLock is one held lock.
type kernelLock struct {
	kind  lockKind
	write bool
	pid   int    // the owner, in this process's PID namespace; 0 for OFD locks
	dev   uint64 // the locked file's device as the kernel numbers its super block
}

// kernelLocks is the table, by inode number. The zero value (ok false) is a
// table that could not be read: it proves nothing either way.
type kernelLocks struct {
	ok    bool
	byIno map[uint64][]kernelLock
}

// on returns the locks on the inode of f, and for each whether its device is
// f's own. A file on btrfs (or any file system whose stat reports another
// device than its super block's) never matches by device, so callers that
// act on a lock also require the owner's pid to tie it to the holder.
func (k kernelLocks) on(f fileID) []kernelLock {
	if !k.ok || !f.exists() {
		return nil
	}
	return k.byIno[f.ino]
}

// sameDev reports whether l is on f's device.
func (l kernelLock) sameDev(f fileID) bool { return l.dev == f.dev }
