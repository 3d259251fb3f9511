package sessionlocks

// Resolving what a person typed to one session id: `sessionlocks list`
// prints ids shortened to a unique prefix, and every method that takes a
// session id resolves it here.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxCandidates bounds the ids an ambiguous prefix's error lists.
const maxCandidates = 20

// Resolve returns the id of the session that id names: id itself when a
// session directory has exactly that name, else the one session whose id
// begins with id. An invalid id gives an *IDError, a prefix of no session a
// *NotFoundError, and a prefix of several an *AmbiguousIDError. The state
// dir is read afresh: what is resolved here may be acted on.
func (e *Engine) Resolve(id string) (string, error) {
	if err := ValidateID(id); err != nil {
		return "", err
	}
	if isSessionDir(filepath.Join(e.dir, id)) {
		return id, nil
	}
	if err := e.checkStateDir(); errors.Is(err, fs.ErrNotExist) {
		return "", &NotFoundError{ID: id, Dir: e.dir, NoDir: true}
	} else if err != nil {
		return "", err
	}
	ids, err := e.sessionIDs()
	if err != nil {
		return "", err
	}
	matches := slices.DeleteFunc(ids, func(c string) bool { return !strings.HasPrefix(c, id) }) // ids is this call's own
	switch len(matches) {
	case 0:
		return "", &NotFoundError{ID: id, Dir: e.dir}
	case 1:
		return matches[0], nil
	}
	slices.Sort(matches)
	ae := &AmbiguousIDError{Prefix: id, Count: len(matches)}
	ae.Candidates = matches[:min(len(matches), maxCandidates)]
	return "", ae
}

// isSessionDir reports whether path is a directory itself, not a link to one.
func isSessionDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}
