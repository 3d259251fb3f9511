package sessionlocks

import "strconv"

const maxIDLen = 128

// ValidateID reports whether id is a safe session id: one path component of
// [A-Za-z0-9._-], not beginning with '.', at most 128 bytes. The error is
// an *IDError that says what is wrong.
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

func idByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

const maxPID = 1<<31 - 1

// parseLockName returns the pid and kind ("lock" or "hold") of an inuse file
// name, inuse.<pid>.(lock|hold) with a pid of 1 to 2^31-1 written without
// leading zeros, or ok=false for any other name: the only names the engine
// ever deletes.
func parseLockName(name string) (pid int, kind string, ok bool) {
	const prefix = "inuse."
	if len(name) < len("inuse.1.lock") || name[:len(prefix)] != prefix {
		return 0, "", false
	}
	kind = name[len(name)-4:]
	if kind != "lock" && kind != "hold" || name[len(name)-5] != '.' {
		return 0, "", false
	}
	digits := name[len(prefix) : len(name)-5]
	if len(digits) == 0 || len(digits) > 10 || digits[0] == '0' {
		return 0, "", false
	}
	n := 0
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, "", false
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > maxPID {
		return 0, "", false
	}
	return n, kind, true
}

func lockFileName(pid int) string { return "inuse." + strconv.Itoa(pid) + ".lock" }
func holdFileName(pid int) string { return "inuse." + strconv.Itoa(pid) + ".hold" }
