package sessionlocks

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"
)

// This file holds the portable half of the platform layer. Each OS supplies,
// in its own file:
//
//	readProc(pid int) procInfo             what the kernel says about a pid
//	bootTime() (time.Time, error)          when the machine booted, to the clock's precision
//	probeHold(path, want) holdProbe        whether someone holds the .hold file's lock
//	removeInDir(dir, name, want) error     unlink a regular file only if it is still want
//	tryLock(f *os.File) error              non-blocking exclusive lock (the operation lock)
//	unlockFile(f *os.File)
//	terminate(pid int) error               ask a process to exit (SIGTERM)
//	lstatID(path string) (fileID, error)   lstat, as a fileID
//	statID(path string) (fileID, error)    stat (following links), as a fileID
//	openOpLockFile(stateDir, id)           open (creating) the CLI's operation lock file of a session (oplock_*.go)
//	readRegular(path, limit) ([]byte, fileID, error)  read a small regular file, never through a link, never blocking
//	dirReader                               reads session directories for one scan worker (readdir_*.go)

// procState is whether a process exists.
type procState int

const (
	procUnknown procState = iota // could not tell (see procInfo.err)
	procAlive
	procGone
	procZombie // exited, not yet reaped: kill(pid, 0) still succeeds on it
	// procThread: the pid is a thread of another process (its thread-group
	// id is tgid), not a process. /proc/<tid>/stat answers for threads too,
	// and kill(tid, sig) signals the whole thread group.
	procThread
)

// procInfo is what the platform learned about a pid. Fields the platform
// could not read are zero (argv nil, start zero, uid and ppid -1) and err says why.
type procInfo struct {
	state procState
	start time.Time
	argv  []string
	uid   int
	ppid  int
	tgid  int // procThread: the process the thread belongs to; 0 if unknown
	err   error
}

// holdProbe is the result of testing a .hold file's lock.
type holdProbe struct {
	held bool
	id   fileID // the file probed (its identity, from the open descriptor)
	err  error  // the probe could not be made; held is meaningless
}

// errNotRegular is returned for lock files that are links, FIFOs, devices or
// directories: they are never opened, and never deleted.
var errNotRegular = errors.New("not a regular file; left alone")

// idBatch is how many session ids the state dir's reader hands to the
// scan at a time.
const idBatch = 256

// errNotDir is returned for a session directory that is a symlink or not a
// directory at all: it is not followed, and not a session.
var errNotDir = errors.New("not a directory")

// sessionDir is what a dirReader read of one session directory.
type sessionDir struct {
	id      fileID     // the directory, as it was before it was listed
	files   []lockFile // its inuse.* files, sorted (sortLockFiles)
	hasMeta bool       // it holds a workspace.yaml
	meta    []byte     // workspace.yaml's bytes; valid until the reader's next read
	metaID  fileID
	metaErr error // workspace.yaml could not be read
}

// errChanged means a file was replaced or rewritten after it was judged.
var errChanged = errors.New("file changed since it was judged; left alone")

// errLockBusy means a non-blocking lock attempt found the lock held.
var errLockBusy = errors.New("lock is held by another process")

func isRegular(id fileID) bool { return id.mode == 1 }

// sameFile reports whether got, a file just opened by name, is want, the
// file judged: the same device and inode (on Windows, volume serial number
// and file index). A want that names no file matches anything (there was
// nothing to be faithful to), and so does one without an identity: a file
// system that gives no file index must not make every file look replaced.
func sameFile(want, got fileID) bool {
	if !want.exists() || want.dev == 0 && want.ino == 0 {
		return true
	}
	return want.dev == got.dev && want.ino == got.ino
}

// startTolerance absorbs the granularity of process start times (clock ticks
// on Linux, microseconds elsewhere) and of file timestamps, so that a CLI that
// writes its lock in the same instant it starts is never called a reused pid.
const startTolerance = time.Second

// privateName is a name no CLI uses, for a file set aside on its way out
// (see removeInDir): not a session id, not a lock name.
func privateName() string {
	var b [8]byte
	rand.Read(b[:])
	return ".sessionlocks-removing-" + hex.EncodeToString(b[:])
}

// testHookRemoving, when set (tests), runs in removeInDir between checking
// the file and setting it aside: where a CLI re-creating it races the removal.
var testHookRemoving func(path string)

// testHookOpLockDir, when set (tests), runs after the operation-lock
// directory was made or found and before it is opened: where it could be
// swapped for a link.
var testHookOpLockDir func(path string)
