package rpc

// Engine types to wire types, errors included: one function per type, used
// by answers and notifications alike.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
	"github.com/copilot-ide/sessionlocks/watch"
)

// timeLayout is RFC 3339 with milliseconds, always three digits, so that
// every time on the wire has the same shape and JavaScript's Date parses it.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// wireTime formats t in UTC, or returns "" (an absent field) for the zero time.
func wireTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

// requiredTime is wireTime for a required field: the epoch stands in for a
// time the engine did not have (it always has one for a file it found).
func requiredTime(t time.Time) string {
	if t.IsZero() {
		t = time.Unix(0, 0)
	}
	return wireTime(t)
}

func wireHolder(h sessionlocks.Holder) Holder {
	w := Holder{
		SessionID:     h.SessionID,
		PID:           h.PID,
		LockFile:      h.LockFile,
		HoldFile:      h.HoldFile,
		Verdict:       Verdict(h.Verdict),
		Reason:        Reason(h.Reason),
		Detail:        h.Detail,
		LockWrittenAt: requiredTime(h.LockWrittenAt),
		ProbedAt:      requiredTime(h.ProbedAt),
		Cached:        h.Cached,
	}
	if p := h.Process; p != nil && (!p.StartedAt.IsZero() || p.Command != "") {
		w.Process = &Process{StartedAt: wireTime(p.StartedAt), Command: p.Command}
	}
	if o := h.Owner; o != nil {
		w.Owner = &Owner{PID: o.PID, NamespacePID: o.NamespacePID, StartedAt: wireTime(o.StartedAt), Evidence: o.Evidence}
	}
	if h.Verdict == sessionlocks.Live && h.Owner == nil {
		w.NoOwner = h.NoOwner
	}
	if l := h.Launcher; l != nil && h.Verdict == sessionlocks.Live {
		w.Launcher = &Launcher{PID: l.PID, Command: l.Command, Alive: l.Alive}
	}
	if h.Verdict == sessionlocks.Live {
		w.Orphaned, w.Terminal = h.Orphaned, h.Terminal
	}
	return w
}

// wireAll maps xs with f: a list for a required field, [] rather than null.
func wireAll[T, W any](xs []T, f func(T) W) []W {
	out := make([]W, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

// WireSession is s as the protocol gives it (listSessions, canResume): the
// CLI's `list --json` and `explain --json` print it, so that a script reads
// what the IDE reads.
func WireSession(s sessionlocks.Session) Session {
	return Session{
		ID:             s.ID,
		Dir:            s.Dir,
		Name:           s.Name,
		CWD:            s.CWD,
		Repository:     s.Repository,
		Branch:         s.Branch,
		ClientName:     s.ClientName,
		CreatedAt:      wireTime(s.CreatedAt),
		UpdatedAt:      wireTime(s.UpdatedAt),
		State:          SessionState(s.State),
		Conflict:       s.Conflict,
		Holders:        wireAll(s.Holders, wireHolder),
		HoldersOmitted: s.HoldersOmitted,
	}
}

// wireCanResume is canResume's answer for a session judged afresh.
func wireCanResume(s sessionlocks.Session, now time.Time) *CanResumeResult {
	return &CanResumeResult{
		SessionID:      s.ID,
		CanResume:      s.State.CanResume(),
		State:          SessionState(s.State),
		Conflict:       s.Conflict,
		Holders:        wireAll(s.Holders, wireHolder),
		HoldersOmitted: s.HoldersOmitted,
		Message:        s.Message(now),
		Token:          s.Token(),
	}
}

func wireReclaim(r sessionlocks.ReclaimResult, dryRun bool) *ReclaimStaleResult {
	return &ReclaimStaleResult{
		Reclaimed: wireAll(r.Reclaimed, wireHolder),
		Kept:      wireAll(r.Kept, wireHolder),
		Failed:    wireAll(r.Failed, wireFailure),
		Cancelled: r.Cancelled,
		Totals:    ReclaimTotals(r.Totals),
		DryRun:    dryRun,
	}
}

func wireFailure(f sessionlocks.Failure) ReclaimFailure {
	msg := "unknown error"
	if f.Err != nil {
		msg = f.Err.Error()
	}
	return ReclaimFailure{Holder: wireHolder(f.Holder), Error: msg}
}

func wireForce(id string, r sessionlocks.ForceResult) *ForceResumeResult {
	return &ForceResumeResult{
		SessionID:      id,
		Removed:        wireAll(r.Removed, wireHolder),
		Kept:           wireAll(r.Kept, wireHolder),
		RemovedOmitted: r.RemovedOmitted,
		KeptOmitted:    r.KeptOmitted,
		Signalled:      append([]int{}, r.Signalled...), // [] rather than null
		Exited:         append([]int{}, r.Exited...),
		StillRunning:   append([]int{}, r.StillRunning...),
		Killed:         r.Killed,
		NotSignalled:   wireAll(r.NotSignalled, func(n sessionlocks.Refusal) NotSignalled { return NotSignalled(n) }),
		Failed:         wireAll(r.Failed, wireFailure),
		Session:        WireSession(r.Session),
	}
}

func wireChange(c watch.Change) SessionsChangedParams {
	return SessionsChangedParams{Changed: wireAll(c.Changed, WireSession), Removed: append([]string{}, c.Removed...)}
}

func wireWatch(st watch.Stats) *WatchStatus {
	return &WatchStatus{
		Mode:      string(st.Mode),
		Dirs:      st.Dirs,
		Processes: st.Processes,
		Events:    st.Events,
		Rescans:   st.Rescans,
		Notified:  st.Notified,
		Sessions:  st.Sessions,
		Note:      st.Note,
	}
}

// wirePlatform is the status's platform: where the engine judges from.
func wirePlatform(p sessionlocks.Platform) Platform {
	return Platform{OS: runtime.GOOS, Arch: runtime.GOARCH, FileSystem: p.FileSystem, SharedFileSystem: p.Shared, NestedPIDNamespace: p.NestedPIDNamespace}
}

// wireErr turns the error a request in ctx failed with into the JSON-RPC
// error to answer with: -32800 when it was cancelled, the code the protocol
// names for an engine error, -32603 for any other.
func wireErr(ctx context.Context, err error) *Error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ctx.Err())) {
		return newError(CodeRequestCancelled, "request cancelled", nil)
	}
	var (
		je  *Error
		nfe *sessionlocks.NotFoundError
		sde *sessionlocks.StateDirError
		fe  *sessionlocks.FileError
		ce  *sessionlocks.ChangedError
	)
	switch {
	case errors.As(err, &je):
		return je
	case errors.Is(err, sessionlocks.ErrInvalidID): // an *IDError says why
		return paramsError("", "%s", err.Error())
	case errors.As(err, &nfe):
		return newError(CodeSessionNotFound, err.Error(), &ErrorData{SessionID: nfe.ID, StateDir: nfe.Dir})
	case errors.As(err, &sde):
		cause := osError(sde.Err)
		return newError(CodeStateDir, fmt.Sprintf("state directory %s unreadable: %s", sde.Path, cause), &ErrorData{Path: sde.Path, Error: cause})
	case errors.As(err, &fe):
		cause := osError(fe.Err)
		return newError(CodeFileOp, fmt.Sprintf("%s %s: %s", fe.Op, fe.Path, cause), &ErrorData{Path: fe.Path, Op: fe.Op, Error: cause})
	case errors.Is(err, sessionlocks.ErrBusy):
		return newError(CodeSessionBusy, err.Error(), nil)
	case errors.As(err, &ce):
		e := &Error{Code: CodeSessionChanged, Message: "session changed: " + ce.Session.Message(time.Now()) + " Nothing was done; ask again with the answer in data."}
		e.SetError(wireCanResume(ce.Session, time.Now()))
		return e
	}
	return newError(CodeInternalError, "internal error: "+err.Error(), nil)
}

// osError is the operating system's own message ("permission denied"),
// without the op and path an *fs.PathError repeats: the error data carries
// those separately.
func osError(err error) string {
	if err == nil {
		return "unknown error"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil {
		return pe.Err.Error()
	}
	var se *os.SyscallError
	if errors.As(err, &se) && se.Err != nil {
		return se.Err.Error()
	}
	return err.Error()
}
