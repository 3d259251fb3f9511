package sessionlocks

import (
	"regexp"
	"strconv"
)

const maxIDLen = 128

// ValidateID reports whether id is a safe session id: one path component of
// [A-Za-z0-9._-], not beginning with '.' (no session does; the CLI keeps its
// .session-operation-locks there), at most 128 bytes. The error is an
// *IDError that says what is wrong, so that a person can fix the request.
func ValidateID(id string) error {
	switch {
	case id == "":
		return &IDError{ID: id, Reason: "it is empty"}
	case len(id) > maxIDLen:
		return &IDError{ID: id, Reason: "it is longer than 128 characters"}
	case id == "." || id == "..":
		return &IDError{ID: id, Reason: "it names a directory, not a session"}
	}
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			return &IDError{ID: id, Reason: "only letters, digits, '.', '_' and '-' may appear in a session id (it must be a single path component)"}
		}
	}
	if id[0] == '.' {
		return &IDError{ID: id, Reason: "no session id begins with '.' (the state dir's dot-names, such as .session-operation-locks, are the CLI's own)"}
	}
	return nil
}

// validID is ValidateID == nil for a name read from a directory, without
// an error value or a string.
func validID(name []byte) bool {
	if len(name) == 0 || len(name) > maxIDLen || name[0] == '.' {
		return false
	}
	for _, c := range name {
		if !idByte(c) {
			return false
		}
	}
	return true
}

func idByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// lockName matches the only file names the engine ever deletes.
var lockName = regexp.MustCompile(`^inuse\.[1-9][0-9]*\.(lock|hold)$`)

const maxPID = 1<<31 - 1

// parseLockName returns the pid and kind ("lock" or "hold") of an inuse file
// name, or ok=false for any other name, including pids out of range.
func parseLockName(name string) (pid int, kind string, ok bool) {
	// A cheap prefix test first: most names in a session dir are not locks.
	if len(name) < len("inuse.1.lock") || name[:6] != "inuse." || !lockName.MatchString(name) {
		return 0, "", false
	}
	kind = name[len(name)-4:]
	n, err := strconv.ParseInt(name[6:len(name)-5], 10, 64)
	if err != nil || n < 1 || n > maxPID {
		return 0, "", false
	}
	return int(n), kind, true
}

func lockFileName(pid int) string { return "inuse." + strconv.Itoa(pid) + ".lock" }
func holdFileName(pid int) string { return "inuse." + strconv.Itoa(pid) + ".hold" }
