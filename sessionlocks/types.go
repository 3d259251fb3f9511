// Package sessionlocks decides whether each GitHub Copilot CLI session is in
// use, judging every inuse.<pid>.lock the CLI leaves in its session directory
// by the strongest evidence the platform offers: the CLI's kernel lock on its
// .hold file, then the identity and start time of the named process.
//
// The rule that outranks every other: a live session is never judged stale
// and a live lock is never deleted. Where the evidence is missing the
// verdict is Unknown, which is never reclaimed. The package knows nothing of
// JSON-RPC; rpc/ maps these types onto the wire.
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
// asking: nobody is, or might be, writing it.
func (s State) CanResume() bool { return s == StateFree || s == StateStale }

// Process is what the engine learned about the process a lock names.
type Process struct {
	StartedAt time.Time // zero when unknown
	Command   string    // the arguments joined by spaces; empty when unreadable
	Argv      []string
	UID       int // -1 when unknown
}

// Holder is one inuse.<pid>.lock (with its .hold, if present) and the verdict on it.
type Holder struct {
	SessionID string
	PID       int
	// LockFile is the absolute path of inuse.<pid>.lock (for a .hold whose
	// .lock is gone, the path the .lock would have).
	LockFile string
	HoldFile string // "" when there is none
	Verdict  Verdict
	Reason   Reason
	Detail   string // one sentence a person can read, saying why
	// LockWrittenAt is the .lock's modification time (the .hold's without a .lock).
	LockWrittenAt time.Time
	Process       *Process // nil when the process could not be examined or does not exist
	ProbedAt      time.Time
	Cached        bool // the verdict came from the probe cache
	// RecheckAt is when the verdict may change by time alone (the end of a
	// starting holder's settle window); zero otherwise.
	RecheckAt time.Time

	// Owner is the process proven to hold the session through this
	// holder's files, the only one Force may signal; NoOwner says, for a
	// live holder without one, why.
	Owner   *Owner
	NoOwner string

	// For a live holder: who started it (nil when that cannot be known), its
	// controlling terminal, whether it is orphaned (nil when its parent
	// cannot be read), and a sentence that says so (attach.go).
	Launcher   *Launcher
	Terminal   string
	Orphaned   *bool
	Attachment string

	holdFree bool // the last probe found the .hold unlocked: only then may it be deleted

	lockID fileID // identity of the .lock when judged; zero if missing
	holdID fileID // identity of the .hold when judged; zero if missing
}

// HoldFree reports that the judgement probed the .hold and found its
// kernel lock free (not that it was too young or unreadable to probe).
func (h Holder) HoldFree() bool { return h.holdFree }

// Owner is the process proven to hold a session through one holder's files
// (owner.go says how).
type Owner struct {
	PID int // in this process's PID namespace
	// NamespacePID is the pid the lock file names when the owner runs in a
	// PID namespace below this one (a container); 0 when it is PID.
	NamespacePID int
	StartedAt    time.Time
	Evidence     string // one sentence: what proves it

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
	// The modification time in seconds and nanoseconds: one int64 of
	// nanoseconds would read a year-2300 lock as older than the boot.
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

	decided *decided // a judgement to decide on; nil in listings
}

// decided is the live and unknown holders a judgement saw, for
// ForceOptions.Expect.
type decided struct {
	token    string
	nonStale []string // the entries token is made of
}

// Token names the live and unknown holders, for ForceOptions.Expect; "" in
// listings.
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
