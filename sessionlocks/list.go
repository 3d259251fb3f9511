package sessionlocks

// Listing sessions: the state dir's session ids, each session read on
// every core, newest first.

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/copilot-ide/sessionlocks/internal/shareopen"
)

// ListOptions select what List returns.
type ListOptions struct {
	// IDs are the sessions to list, full ids, in the order given: each must
	// exist. Nil means every session, newest UpdatedAt first.
	IDs []string
}

// List returns the sessions opts select; a missing state dir has none.
// Verdicts may come from the probe cache; every session is checked
// against the disk.
func (e *Engine) List(ctx context.Context, opts ListOptions) ([]Session, error) {
	ids, all := opts.IDs, opts.IDs == nil
	if all {
		// One at a time: a second listing (the watcher's first beside the
		// IDE's) reads what the first cached instead of doing its work twice.
		select {
		case e.listing <- struct{}{}:
			defer func() { <-e.listing }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		var err error
		if ids, err = e.sessionIDs(); err != nil {
			return nil, err
		}
	} else {
		for _, id := range ids {
			if err := ValidateID(id); err != nil {
				return nil, err
			}
		}
	}
	out, found, err := e.readSessions(ctx, ids, all)
	if err != nil {
		return nil, err
	}
	res := out[:0]
	seen := make(map[string]bool, len(ids))
	for i, s := range out {
		switch {
		case found[i]:
			res = append(res, s)
			seen[s.ID] = true
		case !all:
			return nil, &NotFoundError{ID: ids[i], Dir: e.dir}
		}
	}
	if all {
		e.caches.prune(seen)
		slices.SortFunc(res, func(a, b Session) int { return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), cmp.Compare(a.ID, b.ID)) })
	}
	return res, nil
}

// readSessions reads ids on every core. With all, a session that cannot be
// read is left out rather than fail the listing (unless the state dir
// cannot be read).
func (e *Engine) readSessions(ctx context.Context, ids []string, all bool) ([]Session, []bool, error) {
	out := make([]Session, len(ids))
	found := make([]bool, len(ids))
	errs := make([]error, len(ids))
	p := e.platform()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0)*2, (len(ids)+15)/16) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(ids) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				out[i], found[i], errs[i] = e.readSession(ctx, ids[i], scan{cached: true}, p, nil)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	for i, err := range errs {
		switch {
		case err == nil:
		case all && !errors.Is(err, ErrStateDir):
			e.log.Debug("session skipped", "id", ids[i], "err", err)
			found[i] = false
		default:
			return nil, nil, err
		}
	}
	return out, found, nil
}

// sessionIDs lists the state dir's entries that may be sessions: valid ids
// of directories (never of links).
func (e *Engine) sessionIDs() ([]string, error) {
	if err := e.checkStateDir(); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	d, err := shareopen.Open(e.dir)
	if err != nil {
		return nil, &StateDirError{Path: e.dir, Err: err}
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil, &StateDirError{Path: e.dir, Err: err}
	}
	ids := make([]string, 0, len(ents))
	for _, de := range ents {
		if de.IsDir() && ValidateID(de.Name()) == nil {
			ids = append(ids, de.Name())
		}
	}
	return ids, nil
}
