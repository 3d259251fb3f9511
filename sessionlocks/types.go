// Package sessionlocks decides whether each GitHub Copilot CLI session is in
// use, judging every inuse.<pid>.lock the CLI leaves in its session directory
// by the strongest evidence the platform offers: the CLI's kernel lock on its
// .hold file, then the identity and start time of the named process.
//
// The rule that outranks everything else in this package: a live session is
// never judged stale and a live lock is never deleted. Where the evidence is
// missing the verdict is Unknown, with a detail that says why, and Unknown
// holders are never reclaimed.
//
// The package knows nothing of JSON-RPC; rpc/ maps these types onto the wire.
package sessionlocks

import (
	"time"
)

// Verdict is the judgement on one lock holder.
type Verdict string

const (
	// Live means a process that is (or is about to be) writing the session holds the lock.
	Live Verdict = "live"
	// Stale means the lock was left behind by a process that is gone.
	Stale Verdict = "stale"
	// Unknown means the evidence is missing; an unknown lock is never reclaimed automatically.
	Unknown Verdict = "unknown"
)

// Reason names the rule that produced a verdict.
type Reason string

const (
	ReasonHoldLocked    Reason = "hold-locked"    // live: the .hold file's flock is held
	ReasonVerified      Reason = "verified"       // live: the process is the Copilot CLI and older than the lock
	ReasonStarting      Reason = "starting"       // live: the lock is younger than the settle window and its process is alive
	ReasonHoldReleased  Reason = "hold-released"  // stale: nobody holds the .hold file's flock any more
	ReasonProcessExited Reason = "process-exited" // stale: no such process, or a zombie
	ReasonPIDReused     Reason = "pid-reused"     // stale: the process started after the lock was written
	ReasonPredatesBoot  Reason = "predates-boot"  // stale: the lock was written before the machine booted
	ReasonUnverified    Reason = "unverified"     // unknown: alive, older than the lock, but not recognisably the CLI
	ReasonUnprobeable   Reason = "unprobeable"    // unknown: the process or file could not be examined
)

// AllReasons lists every reason, in the order the rules are documented.
var AllReasons = []Reason{
	ReasonHoldLocked, ReasonVerified, ReasonStarting,
	ReasonHoldReleased, ReasonProcessExited, ReasonPIDReused, ReasonPredatesBoot,
	ReasonUnverified, ReasonUnprobeable,
}

// State summarises a session from its holders.
type State string

const (
	StateFree    State = "free"    // no lock files at all
	StateInUse   State = "inUse"   // at least one live holder
	StateUnknown State = "unknown" // no live holder, at least one unknown
	StateStale   State = "stale"   // only stale holders
)

// CanResume reports whether a session in this state may be resumed without
// asking: only when nobody is, or might be, writing it.
func (s State) CanResume() bool { return s == StateFree || s == StateStale }

// Process is what the engine learned about the process a lock names.
type Process struct {
	// StartedAt is when the process started; zero when unknown.
	StartedAt time.Time
	// Command is the process's command line, arguments joined by spaces; empty when unreadable.
	Command string
	// Argv is the command line as the kernel reports it.
	Argv []string
	// UID is the process owner's user id, or -1 when unknown.
	UID int
}

// Holder is one inuse.<pid>.lock (with its .hold, if present) and the verdict on it.
type Holder struct {
	SessionID string
	PID       int
	// LockFile is the absolute path of inuse.<pid>.lock. For an orphan .hold
	// (a .hold whose .lock is gone) it is the path the .lock would have.
	LockFile string
	// HoldFile is the absolute path of inuse.<pid>.hold, or "" when there is none.
	HoldFile string
	Verdict  Verdict
	Reason   Reason
	// Detail is one sentence a person can read, saying why.
	Detail string
	// LockWrittenAt is the .lock's modification time (the .hold's for an orphan hold).
	LockWrittenAt time.Time
	// Process is nil when the process could not be examined or does not exist.
	Process  *Process
	ProbedAt time.Time
	// Cached is true when the verdict came from the probe cache.
	Cached bool
	// RecheckAt is when the verdict may change by time alone: the end of
	// the settle window of a holder judged starting; zero otherwise.
	RecheckAt time.Time

	// Owner is the process proven to hold the session through this
	// holder's files, the only one Force may signal; nil when none is
	// proven (always so for a holder that is not live).
	Owner *Owner
	// NoOwner says, for a live holder without an Owner, why none is proven.
	NoOwner string

	// For a live holder: the process that started it (nil when that cannot
	// be known), its controlling terminal ("" for none), whether it was left
	// running after its launcher went with nobody attached (nil when its
	// parent cannot be read), and a sentence that says so (attach.go).
	Launcher   *Launcher
	Terminal   string
	Orphaned   *bool
	Attachment string

	holdFree bool // the last probe found the .hold unlocked: only then may it be deleted

	lockID fileID // identity of the .lock when judged; zero if missing
	holdID fileID // identity of the .hold when judged; zero if missing
}

// HoldFree reports that the judgement probed the .hold and found its
// kernel lock free: a .hold that exists but is neither this nor held (the
// reason hold-locked) was not probed, being too young or unreadable.
func (h Holder) HoldFree() bool { return h.holdFree }

// Owner is the process proven to hold a session through one holder's
// files: it has the holder's .hold open and holds its exclusive lock (on
// Linux through a descriptor of its own; on macOS and Windows as the only
// process that has it open, the lock held), or, for a CLI that writes no
// .hold, has the session's session.db open; its pid is the one the lock
// file names (in its own PID namespace), and it started before that file
// was made.
type Owner struct {
	// PID is the owner's process id in this process's PID namespace.
	PID int
	// NamespacePID is the pid the lock file names when the owner runs in a
	// PID namespace below this one (a container); 0 when it is PID.
	NamespacePID int
	StartedAt    time.Time
	// Evidence says in one sentence what proves it.
	Evidence string

	open      fileID   // the file it has open: its .hold, or session.db
	openPath  string   // that file's path
	exclusive bool     // the proof includes the exclusive lock held through it, by it alone
	exe       fileID   // its executable when proven: an exec since changes it
	argv      []string // its command line when proven
	uid       int
}

// fileID identifies one version of a file so that a mutation can check the
// file is still the one that was judged.
type fileID struct {
	dev, ino uint64
	// The modification time as the file system gives it, seconds and
	// nanoseconds apart: a time in one int64 of nanoseconds wraps beyond
	// 2262 and before 1678, and a year-2300 lock read as 1715 would look
	// older than the boot.
	msec  int64
	mnsec int32
	mode  uint32 // file type bits only; 0 means "no file"
	size  int64
}

func (f fileID) exists() bool { return f.mode != 0 }

// modTime is the file's modification time.
func (f fileID) modTime() time.Time { return time.Unix(f.msec, int64(f.mnsec)) }

// Session is one directory under the state dir and its holders.
type Session struct {
	ID         string
	Dir        string
	Name       string
	CWD        string
	Repository string
	Branch     string
	ClientName string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	State      State
	Conflict   bool
	// Holders are the session's holders in pid order, at most 1,000 of them
	// (a directory of years of crashes may hold 100,000); HoldersOmitted
	// counts the rest. State and Conflict count every one.
	Holders        []Holder
	HoldersOmitted int

	// decided is set by Session (a judgement to decide on), nil in
	// listings; a pointer keeps the Session a listing copies small.
	decided *decided
}

// decided is what a judgement to decide on adds to a Session: the live and
// unknown holders it saw, for ForceOptions.Expect.
type decided struct {
	token    string
	nonStale []string // the entries token is made of
}

// Token names the live and unknown holders, for ForceOptions.Expect; set
// by Session (a judgement to decide on), "" in listings.
func (s Session) Token() string {
	if s.decided == nil {
		return ""
	}
	return s.decided.token
}

// CacheStats are the probe cache's counters.
type CacheStats struct {
	TTL     time.Duration
	Entries int
	Hits    uint64
	Misses  uint64
}
