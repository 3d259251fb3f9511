package rpc

// The method bodies: what each method of the table does with the engine, and
// the checks on its params that decoding alone cannot make.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/version"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// resolveIDs resolves each id the client sent in field (ids or unique
// prefixes) to a session id, dropping repeats; see Engine.Resolve.
func (s *Server) resolveIDs(field string, ids []string) ([]string, error) {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for i, id := range ids {
		full, err := s.engine.Resolve(id)
		if err != nil {
			return nil, idError(fmt.Sprintf("%s[%d]", field, i), err)
		}
		if !seen[full] {
			seen[full] = true
			out = append(out, full)
		}
	}
	return out, nil
}

// idError answers an id that names no one session: -32602 naming field for
// an invalid id or an ambiguous prefix (with the sessions it matches in
// data), the engine's own error (-32001, -32002) otherwise.
func idError(field string, err error) error {
	var ae *sessionlocks.AmbiguousIDError
	var ide *sessionlocks.IDError
	switch {
	case errors.As(err, &ae):
		data := &ErrorData{Field: field, Candidates: ae.Candidates, Matches: ae.Count}
		return newError(CodeInvalidParams, "invalid params: "+field+": "+ae.Error(), data)
	case errors.As(err, &ide):
		return paramsError(field, "%s", ide.Error())
	}
	return err
}

func (s *Server) listSessions(ctx context.Context, p *ListSessionsParams) (*ListSessionsResult, error) {
	if p.Limit != nil && *p.Limit < 0 {
		return nil, paramsError("limit", "must not be negative, got %d", *p.Limit)
	}
	if p.Offset < 0 {
		return nil, paramsError("offset", "must not be negative, got %d", p.Offset)
	}
	ids, err := s.resolveIDs("ids", p.IDs)
	if err != nil {
		return nil, err
	}
	var sessions []sessionlocks.Session
	switch {
	case p.IDs == nil:
		sessions, err = s.engine.List(ctx, sessionlocks.ListOptions{})
	case len(ids) > 0:
		// An empty list (an IDE whose selection filtered down to nothing)
		// selects none, as reclaimStale's sessionIds does.
		sessions, err = s.engine.List(ctx, sessionlocks.ListOptions{IDs: ids})
		slices.SortStableFunc(sessions, func(a, b sessionlocks.Session) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	}
	if err != nil {
		return nil, err
	}
	if p.IncludeFree != nil && !*p.IncludeFree {
		// On a copy: the engine's slice is left as it is.
		sessions = slices.DeleteFunc(slices.Clone(sessions), func(s sessionlocks.Session) bool { return s.State == sessionlocks.StateFree })
	}
	total := len(sessions)
	sessions = sessions[min(p.Offset, total):]
	if p.Limit != nil && *p.Limit < len(sessions) {
		sessions = sessions[:*p.Limit]
	}
	return &ListSessionsResult{StateDir: s.engine.Status().StateDir, Total: total, Sessions: wireAll(sessions, WireSession)}, nil
}

func (s *Server) canResume(ctx context.Context, p *CanResumeParams) (*CanResumeResult, error) {
	id, err := s.engine.Resolve(p.SessionID)
	if err != nil {
		return nil, idError("sessionId", err)
	}
	ss, err := s.engine.Judge(ctx, id)
	if err != nil {
		return nil, err
	}
	// A refusal the user asks about later is found in the log.
	logVerdicts(s.log, "canResume", ss)
	return wireCanResume(ss, time.Now()), nil
}

func (s *Server) reclaimStale(ctx context.Context, p *ReclaimStaleParams) (*ReclaimStaleResult, error) {
	ids, err := s.resolveIDs("sessionIds", p.SessionIDs)
	if err != nil {
		return nil, err
	}
	if !p.DryRun {
		if err := s.awaitWatched(ctx); err != nil {
			return nil, err
		}
	}
	// Absent selects every session; an empty list (an IDE whose selection
	// filtered down to nothing) selects none.
	r, err := s.engine.Reclaim(ctx, sessionlocks.ReclaimOptions{IDs: ids, All: p.SessionIDs == nil, DryRun: p.DryRun})
	if err != nil {
		return nil, err
	}
	for _, f := range r.Failed {
		s.log.Warn("could not reclaim a stale lock", "session", f.Holder.SessionID, "lock", f.Holder.LockFile, "error", f.Err)
	}
	if n := len(r.Reclaimed); n > 0 && !p.DryRun {
		s.log.Info("reclaimed stale locks", "count", n)
	}
	return wireReclaim(r, p.DryRun), nil
}

// maxGrace bounds forceResume's graceMs: a caller asking for longer than
// ten minutes has made a mistake, and the request would hold the session.
const maxGrace = 10 * time.Minute

func (s *Server) forceResume(ctx context.Context, p *ForceResumeParams) (*ForceResumeResult, error) {
	if err := sessionlocks.ValidateID(p.SessionID); err != nil {
		return nil, idError("sessionId", err)
	}
	grace := 3 * time.Second
	if p.GraceMs != nil {
		// Compared as milliseconds: converted first, a huge value would
		// overflow a Duration and pass.
		if *p.GraceMs < 0 || int64(*p.GraceMs) > maxGrace.Milliseconds() {
			return nil, paramsError("graceMs", "must be between 0 and %d (ten minutes), got %d", maxGrace.Milliseconds(), *p.GraceMs)
		}
		grace = time.Duration(*p.GraceMs) * time.Millisecond
	}
	if p.Kill && !p.Terminate {
		return nil, paramsError("kill", "only with terminate: SIGKILL follows a SIGTERM that did not stop the process")
	}
	// Absent or null: no precondition. Present, it must be a token: an
	// empty one (an IDE that lost the canResume answer) would otherwise
	// read as none and remove what the user was never shown.
	expect := ""
	if p.Expect != nil {
		if !sessionlocks.ValidToken(*p.Expect) {
			return nil, paramsError("expect", "not a token from canResume (pass its answer's token as it is, or leave expect out to set no precondition), got %q", clipString(*p.Expect, 40))
		}
		expect = *p.Expect
	}
	// A prefix is resolved once, here: everything below acts on that one
	// session, and an expect token names holders of that session only.
	id, err := s.engine.Resolve(p.SessionID)
	if err != nil {
		return nil, idError("sessionId", err)
	}
	if err := s.awaitWatched(ctx); err != nil {
		return nil, err
	}
	r, err := s.engine.Force(ctx, id, sessionlocks.ForceOptions{Terminate: p.Terminate, Kill: p.Kill, Grace: grace, Expect: expect})
	if err != nil {
		return nil, err
	}
	s.log.Info("forced resume", "session", id, "removed", len(r.Removed), "kept", len(r.Kept),
		"signalled", r.Signalled, "exited", r.Exited, "stillRunning", r.StillRunning, "notSignalled", len(r.NotSignalled))
	return wireForce(id, r), nil
}

func (s *Server) status(ctx context.Context, _ *StatusParams) (*StatusResult, error) {
	es := s.engine.Status()
	cs := es.Cache
	st := &StatusResult{
		Version:        version.Version,
		GoVersion:      runtime.Version(),
		PID:            os.Getpid(),
		StateDir:       es.StateDir,
		StateDirExists: es.StateDirExists,
		Watching:       s.watching.Load(),
		UptimeMs:       time.Since(s.started).Milliseconds(),
		SettleMs:       es.Settle.Milliseconds(),
		Cache:          CacheStatus{TTLMs: cs.TTL.Milliseconds(), Entries: cs.Entries, Hits: cs.Hits, Misses: cs.Misses},
		Platform:       wirePlatform(es.Platform),
	}
	if f := s.opts.LogDropped; f != nil {
		st.LogDropped = f()
	}
	if w := s.opts.Watcher; w != nil && st.Watching {
		st.Watch = wireWatch(w.Stats())
	}
	return st, nil
}
