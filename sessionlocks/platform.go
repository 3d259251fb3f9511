package sessionlocks

// The portable half of the platform layer. Each system supplies readProc
// and bootTime (proc_*.go), probeHold, tryLock, lstatID, openDirStat (a
// directory whose names are lstat'ed and removed), openDirNoFollow and
// openNoFollow (platform_*.go, remove_*.go), openOpLockFile (oplock_*.go).

import (
	"errors"
	"io"
	"time"
)

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

// procInfo is what the platform learned about a pid. Fields it could not
// read are zero (uid and ppid -1) and err says why.
type procInfo struct {
	state procState
	start time.Time
	argv  []string
	uid   int
	ppid  int
	tgid  int // procThread: the process the thread belongs to; 0 if unknown
	// tty names the controlling terminal ("pts/3"), "" for none; ttyKnown
	// is false where it could not be read.
	tty      string
	ttyKnown bool
	err      error
}

// holdProbe is the result of testing a .hold file's lock.
type holdProbe struct {
	held    bool
	changed bool   // the file at the path is not the one judged: a CLI re-created it
	id      fileID // the file probed, from the open descriptor
	err     error  // the probe could not be made; held is meaningless
}

var (
	// errNotRegular: a link, FIFO, device or directory named like a lock
	// file, which is never opened or deleted.
	errNotRegular = errors.New("not a regular file; left alone")
	// errNotDir: a session directory that is a symlink or no directory,
	// which is not followed, and not a session.
	errNotDir   = errors.New("not a directory")
	errChanged  = errors.New("file changed since it was judged; left alone")
	errLockBusy = errors.New("lock is held by another process")
)

func isRegular(id fileID) bool { return id.mode == 1 }

// sameFile reports whether got, a file just opened by name, is want, the
// file judged: the same device and inode (on Windows, volume serial number
// and file index). A want without a file or an identity (a file system
// that gives no file index) matches anything.
func sameFile(want, got fileID) bool {
	if !want.exists() || want.dev == 0 && want.ino == 0 {
		return true
	}
	return want.dev == got.dev && want.ino == got.ino
}

// startTolerance absorbs the granularity of process start times and file
// times: a CLI that writes its lock as it starts is never a reused pid.
const startTolerance = time.Second

// removalStep names the steps of a removal after which a crash leaves
// something for recover.go (docs/judging.md has the table).
type removalStep string

const (
	stepDecided    removalStep = "decided"     // judged stale under the operation lock; nothing done yet
	stepHoldLocked removalStep = "hold-locked" // the .hold's own flock is taken
	stepSetAside   removalStep = "set-aside"   // renamed to its set-aside name
	stepChecked    removalStep = "checked"     // found to be the file judged
	stepUnlinked   removalStep = "unlinked"
	stepPutBack    removalStep = "put-back" // not the file judged: back under its name
)

// testHookRemoval (tests) runs after each step of a removal: the crash
// tests kill the process there.
var testHookRemoval func(step removalStep, path string)

func reached(step removalStep, path string) {
	if testHookRemoval != nil {
		testHookRemoval(step, path)
	}
}

// testHookOpLockDir (tests) runs after the operation-lock directory was
// made or found and before it is opened: where it could become a link.
var testHookOpLockDir func(path string)

// readRegular reads up to limit bytes of a regular file, never through a
// final symlink and never blocking on a FIFO (openNoFollow).
func readRegular(path string, limit int64) ([]byte, fileID, error) {
	f, id, err := openNoFollow(path)
	if err != nil {
		return nil, id, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit))
	return b, id, err
}
