package rpc

// The wire contract's types: every params, result and notification type (the
// method table is in table.go, the error codes in errors.go). The doc comments
// become the JSON Schema descriptions, so they are written for the reader of
// the schema. Struct tags: a field without omitempty is required; `jsonschema`
// tags carry enums, defaults and bounds for github.com/invopop/jsonschema.

import (
	"encoding/json"
)

// SessionState summarises a session from the verdicts on its holders.
type SessionState string

// The session states.
const (
	SessionFree    SessionState = "free"    // no lock files at all
	SessionInUse   SessionState = "inUse"   // a process is, or is about to be, writing the session
	SessionUnknown SessionState = "unknown" // no holder known to be live, and one could not be judged
	SessionStale   SessionState = "stale"   // every holder a leftover of a process that is gone
)

// Verdict is the judgement on one lock holder.
type Verdict string

// The verdicts.
const (
	VerdictLive    Verdict = "live"    // a process that is (or is about to be) writing the session holds the lock
	VerdictStale   Verdict = "stale"   // the lock was left behind by a process that is gone
	VerdictUnknown Verdict = "unknown" // the evidence is missing: never reclaimed automatically
)

// Reason names the rule that produced a verdict: one of the engine's
// (sessionlocks.AllReasons), in the order the rules are documented; a test
// keeps Holder.Reason's enum tag in step with them.
type Reason string

// Process is what is known about the process a lock names.
type Process struct {
	// StartedAt is when the process started (RFC 3339, UTC); absent when unknown.
	StartedAt string `json:"startedAt,omitempty" jsonschema:"format=date-time"`
	// Command is the process's command line, arguments joined by spaces; absent when unreadable.
	Command string `json:"command,omitempty"`
}

// Holder is one inuse.<pid>.lock file (with its inuse.<pid>.hold, if present) and the verdict on it.
type Holder struct {
	// SessionID is the id of the session whose directory holds the lock.
	SessionID string `json:"sessionId"`
	// PID is the process id the lock names.
	PID int `json:"pid"`
	// LockFile is the absolute path of inuse.<pid>.lock (for a .hold whose .lock is gone, the path the .lock would have).
	LockFile string `json:"lockFile"`
	// HoldFile is the absolute path of inuse.<pid>.hold; absent when there is none.
	HoldFile string `json:"holdFile,omitempty"`
	// Verdict is the judgement: live, stale or unknown.
	Verdict Verdict `json:"verdict" jsonschema:"enum=live,enum=stale,enum=unknown"`
	// Reason names the rule that produced the verdict.
	Reason Reason `json:"reason" jsonschema:"enum=hold-locked,enum=verified,enum=starting,enum=hold-released,enum=process-exited,enum=pid-reused,enum=predates-boot,enum=unverified,enum=unprobeable"`
	// Detail is one sentence a person can read, saying why.
	Detail string `json:"detail"`
	// LockWrittenAt is the modification time of the .lock (of the .hold when the .lock is gone), RFC 3339, UTC.
	LockWrittenAt string `json:"lockWrittenAt" jsonschema:"format=date-time"`
	// Process is what is known about the named process; absent when it does not exist or could not be examined.
	Process *Process `json:"process,omitempty"`
	// ProbedAt is when the verdict was reached (RFC 3339, UTC).
	ProbedAt string `json:"probedAt" jsonschema:"format=date-time"`
	// Cached is true when the verdict came from the probe cache rather than a fresh probe.
	Cached bool `json:"cached"`
	// Owner is the process proven to hold the session through this holder's files, the only process forceResume with terminate ever signals; present only for a live holder with such proof, and only in the answers that decide (canResume, forceResume): listings do not look for it.
	Owner *Owner `json:"owner,omitempty"`
	// NoOwner says why no process is proven to hold the session, for a live holder without an owner in canResume and forceResume answers; absent otherwise.
	NoOwner string `json:"noOwner,omitempty"`
	// Launcher is the process that started a live holder (above the CLI's own loader, npm-loader.js or copilot.cmd), as
	// far as it can be known; absent for holders that are not live, and when it cannot be known (the holder had already
	// been handed to another parent when the server first saw it).
	Launcher *Launcher `json:"launcher,omitempty"`
	// Orphaned is true when a live holder was left running after its launcher went and has no controlling terminal
	// (on Windows the terminal is not read): nobody is attached to it. Absent for holders that are not live, and when
	// the holder's parent cannot be read.
	Orphaned *bool `json:"orphaned,omitempty"`
	// Terminal is a live holder's controlling terminal (pts/3, ttys004); absent when it has none.
	Terminal string `json:"terminal,omitempty"`
}

// Launcher is the process that started a live holder.
type Launcher struct {
	// PID is its process id.
	PID int `json:"pid"`
	// Command is its command line, clipped to about 80 characters.
	Command string `json:"command"`
	// Alive is false once the process that started the holder has exited (a process that reused its pid is not it).
	Alive bool `json:"alive"`
}

// Owner is the process proven to hold a session: the kernel ties it to the session's own files (the exclusive flock on
// its inuse.<pid>.hold, or for a CLI that writes no .hold an open session.db), its pid is the one the lock names (in its
// own PID namespace), and it started before the lock was written.
type Owner struct {
	// PID is the owner's process id as this server sees it.
	PID int `json:"pid"`
	// NamespacePID is the pid the lock file names, when the owner runs in a PID namespace below the server's (a container); absent when it is pid.
	NamespacePID int `json:"namespacePid,omitempty"`
	// StartedAt is when the owner started (RFC 3339, UTC).
	StartedAt string `json:"startedAt" jsonschema:"format=date-time"`
	// Evidence says in one sentence what proves it.
	Evidence string `json:"evidence"`
}

// Session is one directory under the state directory and the verdicts on its lock holders.
type Session struct {
	// ID is the session id, the name of its directory.
	ID string `json:"id"`
	// Dir is the absolute path of the session directory.
	Dir string `json:"dir"`
	// Name is the session's name from workspace.yaml; absent when unset.
	Name string `json:"name,omitempty"`
	// CWD is the working directory the session was started in; absent when unknown.
	CWD string `json:"cwd,omitempty"`
	// Repository is the repository the session works on; absent when unknown.
	Repository string `json:"repository,omitempty"`
	// Branch is the git branch the session works on; absent when unknown.
	Branch string `json:"branch,omitempty"`
	// ClientName is the client that created the session (for example the CLI or an IDE); absent when unknown.
	ClientName string `json:"clientName,omitempty"`
	// CreatedAt is when the session was created (RFC 3339, UTC); absent when unknown.
	CreatedAt string `json:"createdAt,omitempty" jsonschema:"format=date-time"`
	// UpdatedAt is when the session was last updated (RFC 3339, UTC); absent when unknown.
	UpdatedAt string `json:"updatedAt,omitempty" jsonschema:"format=date-time"`
	// State summarises the holders: free, inUse, unknown or stale.
	State SessionState `json:"state" jsonschema:"enum=free,enum=inUse,enum=unknown,enum=stale"`
	// Conflict is true when more than one process holds the session at once, which the CLI does not expect.
	Conflict bool `json:"conflict"`
	// Holders are the session's lock holders in pid order, possibly none, and at most 1,000.
	Holders []Holder `json:"holders"`
	// HoldersOmitted counts the holders beyond the first 1,000, which are not listed (a directory of years of
	// crashes, or a hostile one); state and conflict count them all. Absent when none are omitted.
	HoldersOmitted int `json:"holdersOmitted,omitempty"`
}

// ListSessionsParams are the parameters of listSessions.
type ListSessionsParams struct {
	// IDs restricts the answer to these sessions (ids or unique id prefixes); each must name one existing session.
	// Absent or null means every session; an empty list means none (total 0), as reclaimStale's sessionIds does.
	IDs []string `json:"ids,omitzero"`
	// IncludeFree includes sessions with no lock files; defaults to true.
	IncludeFree *bool `json:"includeFree,omitempty" jsonschema:"default=true"`
	// Limit is the most sessions to return; absent means no limit, 0 returns only the total.
	Limit *int `json:"limit,omitempty" jsonschema:"minimum=0"`
	// Offset is how many sessions (after filtering, newest first) to skip; defaults to 0.
	Offset int `json:"offset,omitempty" jsonschema:"minimum=0"`
}

// ListSessionsResult is the result of listSessions.
type ListSessionsResult struct {
	// StateDir is the absolute state directory that was read.
	StateDir string `json:"stateDir"`
	// Total is how many sessions matched before limit and offset were applied.
	Total int `json:"total"`
	// Sessions are the matching sessions, newest updatedAt first.
	Sessions []Session `json:"sessions"`
}

// CanResumeParams are the parameters of canResume.
type CanResumeParams struct {
	// SessionID is the session to judge: its id or a unique prefix of it.
	SessionID string `json:"sessionId"`
}

// CanResumeResult is the result of canResume: a fresh judgement, never from the cache.
type CanResumeResult struct {
	// SessionID is the session that was judged, its full id.
	SessionID string `json:"sessionId"`
	// CanResume is true when nobody is, or might be, writing the session: its state is free or stale.
	CanResume bool `json:"canResume"`
	// State is the session's state.
	State SessionState `json:"state" jsonschema:"enum=free,enum=inUse,enum=unknown,enum=stale"`
	// Conflict is true when more than one process holds the session at once.
	Conflict bool `json:"conflict"`
	// Holders are the session's lock holders, freshly probed, at most 1,000.
	Holders []Holder `json:"holders"`
	// HoldersOmitted counts the holders beyond the first 1,000, judged but not listed; absent when none are omitted.
	HoldersOmitted int `json:"holdersOmitted,omitempty"`
	// Message is one sentence for the IDE's prompt, for example "In use by pid 4242 (copilot), started 10:02.".
	Message string `json:"message"`
	// Token names the live and unknown holders this answer judged. Pass it as forceResume's expect: the session is
	// then taken over only if it has no live or unknown holder the user was not shown (error -32005 otherwise).
	Token string `json:"token"`
}

// ReclaimStaleParams are the parameters of reclaimStale.
type ReclaimStaleParams struct {
	// SessionIDs restricts reclaiming to these sessions (ids or unique id prefixes); absent or null means every
	// session, and an empty list none.
	SessionIDs []string `json:"sessionIds,omitzero"`
	// DryRun reports what would be reclaimed without removing anything.
	DryRun bool `json:"dryRun,omitempty"`
}

// ReclaimFailure is a stale holder whose files could not be removed.
type ReclaimFailure struct {
	// Holder is the holder that was to be reclaimed.
	Holder Holder `json:"holder"`
	// Error says what went wrong.
	Error string `json:"error"`
}

// ReclaimStaleResult is the result of reclaimStale.
type ReclaimStaleResult struct {
	// Reclaimed are the stale holders whose files were removed (or, with dryRun, would be).
	Reclaimed []Holder `json:"reclaimed"`
	// Kept are the holders left alone because they are live or unknown.
	Kept []Holder `json:"kept"`
	// Failed are the stale holders whose files could not be removed.
	Failed []ReclaimFailure `json:"failed"`
	// Cancelled is true when the request was cancelled after it had removed something: it stopped before the next
	// session, and the lists say what it did. (Cancelled before it removed anything, it fails with -32800 instead.)
	Cancelled bool `json:"cancelled,omitempty"`
	// Totals count the holders reclaimed, kept and failed; each list above holds at most the first 1,000.
	Totals ReclaimTotals `json:"totals"`
	// DryRun is true when the call asked for a dry run: nothing was removed, and reclaimed says what would have
	// been. Absent otherwise.
	DryRun bool `json:"dryRun,omitempty"`
}

// ReclaimTotals count what reclaimStale did, listed or not.
type ReclaimTotals struct {
	// Reclaimed counts the stale holders whose files were removed (or, with dryRun, would be).
	Reclaimed int `json:"reclaimed"`
	// Kept counts the holders left alone.
	Kept int `json:"kept"`
	// Failed counts the stale holders whose files could not be removed.
	Failed int `json:"failed"`
}

// ForceResumeParams are the parameters of forceResume.
type ForceResumeParams struct {
	// SessionID is the session to take over: its id or a unique prefix of it.
	SessionID string `json:"sessionId"`
	// Terminate sends SIGTERM to each live holder's proven owner (see Holder.owner) and waits up to graceMs for it to
	// exit; an owner still running then keeps its lock files (listed in stillRunning). Holders without an owner are
	// not signalled (notSignalled says why) and their files are removed as without terminate. Defaults to false.
	Terminate bool `json:"terminate,omitempty" jsonschema:"default=false"`
	// Kill, with terminate, sends SIGKILL to owners still running after graceMs, and then removes their files.
	Kill bool `json:"kill,omitempty" jsonschema:"default=false"`
	// GraceMs is how long to wait, in milliseconds, for signalled owners to exit; defaults to 3000, at most 600000.
	GraceMs *int `json:"graceMs,omitempty" jsonschema:"default=3000,minimum=0,maximum=600000"`
	// Expect is the token of the canResume answer the user decided on. The session is then taken over only if every
	// live or unknown holder it has is one that answer named; if not, nothing is done and the request fails with
	// -32005, the fresh canResume answer in data. A string that is not a token (the empty string included) is
	// refused with -32602 before anything is judged. Absent or null: no precondition, every holder is removed, as
	// the session is found.
	Expect *string `json:"expect,omitempty"`
}

// ForceResumeResult is the result of forceResume.
type ForceResumeResult struct {
	// SessionID is the session that was taken over.
	SessionID string `json:"sessionId"`
	// Removed are the holders whose files were removed.
	Removed []Holder `json:"removed"`
	// Kept are the holders whose files were left: an owner still running after the grace period, or a holder that
	// appeared after the session was judged.
	Kept []Holder `json:"kept"`
	// RemovedOmitted counts the removed holders beyond the first 1,000 listed in removed; absent when none.
	RemovedOmitted int `json:"removedOmitted,omitempty"`
	// KeptOmitted counts the kept holders beyond the first 1,000 listed in kept; absent when none.
	KeptOmitted int `json:"keptOmitted,omitempty"`
	// Signalled are the process ids sent SIGTERM.
	Signalled []int `json:"signalled"`
	// Exited are the signalled processes that exited.
	Exited []int `json:"exited"`
	// StillRunning are the signalled processes still running when forceResume stopped waiting (after SIGKILL too,
	// with kill); their lock files are kept.
	StillRunning []int `json:"stillRunning"`
	// Killed are the process ids sent SIGKILL (kill).
	Killed []int `json:"killed,omitempty"`
	// NotSignalled are the live and unknown holders terminate did not signal, each with why.
	NotSignalled []NotSignalled `json:"notSignalled"`
	// Failed are the holders whose files could not be removed, each with why (their files are kept). Once anything
	// was signalled or removed, a failure is told here rather than as the request's error.
	Failed []ReclaimFailure `json:"failed"`
	// Session is the session as it is afterwards.
	Session Session `json:"session"`
}

// NotSignalled is a holder forceResume with terminate did not signal.
type NotSignalled struct {
	// PID is the process id the holder's lock names.
	PID int `json:"pid"`
	// Why says why it was not signalled, for example that nothing proves the process holds this session.
	Why string `json:"why"`
}

// SessionsChangedParams are the parameters of the sessionsChanged notification.
type SessionsChangedParams struct {
	// Changed are the sessions whose state, holders or metadata changed, in full, as listSessions returns them.
	Changed []Session `json:"changed"`
	// Removed are the ids of sessions whose directory is gone.
	Removed []string `json:"removed"`
}

// CancelParams are the parameters of the $/cancelRequest notification.
type CancelParams struct {
	// ID is the id of the request to cancel, a string or an integer.
	ID json.RawMessage `json:"id"`
}
