package sessionlocks

// The engine's errors: sentinels to test with errors.Is, and the types
// that carry what a caller shows a person (rpc maps each to its error).

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors; test with errors.Is.
var (
	ErrInvalidID   = errors.New("invalid session id")
	ErrNotFound    = errors.New("session not found")
	ErrAmbiguousID = errors.New("ambiguous session id prefix")
	ErrStateDir    = errors.New("state directory unreadable")
	ErrBusy        = errors.New("session busy: its operation lock is held by another process")
	// ErrChanged: a session's live or unknown holders are not the ones the
	// caller decided on (ForceOptions.Expect).
	ErrChanged = errors.New("session changed")
)

// ChangedError says Force found holders the caller had not seen: Session is
// the session as judged now. It wraps ErrChanged.
type ChangedError struct{ Session Session }

func (e *ChangedError) Error() string {
	return fmt.Sprintf("session %s changed since it was judged: it has holders the decision did not include", e.Session.ID)
}
func (e *ChangedError) Unwrap() error { return ErrChanged }

// FileError is a failed file operation, with the path and the operation.
type FileError struct {
	Op, Path string
	Err      error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s %s: %v", e.Op, e.Path, e.Err) }
func (e *FileError) Unwrap() error { return e.Err }

// IDError explains why a session id is invalid; it wraps ErrInvalidID.
type IDError struct {
	ID     string
	Reason string
}

func (e *IDError) Error() string {
	id := e.ID
	if len(id) > 80 {
		id = id[:80] + "..." // a megabyte of id need not come back
	}
	return fmt.Sprintf("invalid session id %q: %s", id, e.Reason)
}
func (e *IDError) Unwrap() error { return ErrInvalidID }

// NotFoundError names the session that was not found; it wraps ErrNotFound.
// NoDir says the state directory itself does not exist.
type NotFoundError struct {
	ID, Dir string
	NoDir   bool
}

func (e *NotFoundError) Error() string {
	if e.NoDir {
		return fmt.Sprintf("session %q not found: the state directory %s does not exist", e.ID, e.Dir)
	}
	return fmt.Sprintf("session %q not found in %s", e.ID, e.Dir)
}
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// AmbiguousIDError names the sessions a prefix could mean (the first 20 in
// sorted order; Count counts them all); it wraps ErrAmbiguousID.
type AmbiguousIDError struct {
	Prefix     string
	Candidates []string
	Count      int
}

func (e *AmbiguousIDError) Error() string {
	more := ""
	if n := e.Count - len(e.Candidates); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("session id prefix %q matches %d sessions: %s%s; type more of the id", e.Prefix, e.Count, strings.Join(e.Candidates, ", "), more)
}
func (e *AmbiguousIDError) Unwrap() error { return ErrAmbiguousID }

// StateDirError wraps ErrStateDir with the path and the cause.
type StateDirError struct {
	Path string
	Err  error
}

func (e *StateDirError) Error() string {
	return fmt.Sprintf("state directory %s unreadable: %v", e.Path, e.Err)
}
func (e *StateDirError) Unwrap() []error { return []error{ErrStateDir, e.Err} }
