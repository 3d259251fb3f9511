package rpc

// The wire contract of status: what the server reports of itself. The doc
// comments become the JSON Schema descriptions (see protocol.go).

// StatusParams are the parameters of status: none.
type StatusParams struct{}

// CacheStatus describes the probe cache.
type CacheStatus struct {
	// TTLMs is how long a probe result is reused, in milliseconds; 0 means the cache is off.
	TTLMs int64 `json:"ttlMs"`
	// Entries is how many probe results the cache holds.
	Entries int `json:"entries"`
	// Hits counts lookups answered from the cache.
	Hits uint64 `json:"hits"`
	// Misses counts lookups that needed a fresh probe.
	Misses uint64 `json:"misses"`
}

// Platform names the operating system and architecture the server runs on, and what it can see from there.
type Platform struct {
	// OS is the operating system, as Go names it (linux, darwin, windows).
	OS string `json:"os"`
	// Arch is the architecture, as Go names it (amd64, arm64).
	Arch string `json:"arch"`
	// FileSystem is the state dir's file-system type (ext4, nfs, 9p, fuse.sshfs, ...), where it could be read.
	FileSystem string `json:"fileSystem,omitempty"`
	// SharedFileSystem is true when other machines may write that file system (NFS, SMB, 9p, FUSE, ...): their pids
	// mean nothing here, so verdicts from pids are unknown, and file notifications miss their changes.
	SharedFileSystem bool `json:"sharedFileSystem,omitempty"`
	// NestedPIDNamespace is true when the server runs in a PID namespace of its own (a sandbox such as Flatpak),
	// which hides every process outside it: verdicts from pids are unknown.
	NestedPIDNamespace bool `json:"nestedPidNamespace,omitempty"`
}

// WatchStatus describes the watcher that pushes sessionsChanged.
type WatchStatus struct {
	// Mode is the watch mode in force: notify or poll.
	Mode string `json:"mode" jsonschema:"enum=auto,enum=notify,enum=poll"`
	// Dirs is how many directories are watched for file events.
	Dirs int `json:"dirs"`
	// Processes is how many holder processes are watched for exit.
	Processes int `json:"processes"`
	// Events counts the file and process events seen.
	Events uint64 `json:"events"`
	// Rescans counts full rescans of the state directory.
	Rescans uint64 `json:"rescans"`
	// Notified counts the sessionsChanged notifications delivered.
	Notified uint64 `json:"notified"`
	// Sessions is how many sessions the watcher knows of.
	Sessions int `json:"sessions"`
	// Note says, in one sentence, why the mode in force differs from the one asked for (for example the inotify watch limit was reached); absent when it does not.
	Note string `json:"note,omitempty"`
}

// StatusResult is the result of status.
type StatusResult struct {
	// Version is the server's version.
	Version string `json:"version"`
	// GoVersion is the Go release the server was built with.
	GoVersion string `json:"goVersion"`
	// PID is the server's process id.
	PID int `json:"pid"`
	// StateDir is the absolute state directory the server reads.
	StateDir string `json:"stateDir"`
	// StateDirExists is false when the state directory does not exist (a mistyped --state-dir, or a COPILOT_HOME
	// that differs between the IDE and a terminal): every session then reads as absent.
	StateDirExists bool `json:"stateDirExists"`
	// Watching is true while sessionsChanged notifications are being pushed.
	Watching bool `json:"watching"`
	// Watch describes the watcher; absent when the server is not watching.
	Watch *WatchStatus `json:"watch,omitempty"`
	// UptimeMs is how long the server has been running, in milliseconds.
	UptimeMs int64 `json:"uptimeMs"`
	// SettleMs is the settle window in milliseconds: a live process's lock younger than this counts as starting.
	SettleMs int64 `json:"settleMs"`
	// Cache describes the probe cache.
	Cache CacheStatus `json:"cache"`
	// Platform names the operating system and architecture.
	Platform Platform `json:"platform"`
	// LogDropped counts the log lines dropped because nobody read the log (a stderr pipe never read); absent when none.
	LogDropped uint64 `json:"logDropped,omitempty"`
}
