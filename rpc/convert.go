package rpc

// The one place where the engine's types become wire types.

// The one place where the engine's types become wire types.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
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

func wireHolder(h sessionlocks.Holder) Holder {
	w := Holder{
		SessionID:      h.SessionID,
		PID:            h.PID,
		LockFile:       h.LockFile,
		HoldFile:       h.HoldFile,
		Verdict:        Verdict(h.Verdict),
		Reason:         Reason(h.Reason),
		Detail:         h.Detail,
		LockWrittenAt:  wireTime(h.LockWrittenAt),
		ProbedAt:       wireTime(h.ProbedAt),
		Cached:         h.Cached,
		WriterVerified: h.WriterVerified,
	}
	if w.LockWrittenAt == "" {
		// Required on the wire; the engine always has an mtime for a file it
		// found, so this is only a guard against an empty string.
		w.LockWrittenAt = wireTime(time.Unix(0, 0))
	}
	if w.ProbedAt == "" {
		w.ProbedAt = wireTime(time.Unix(0, 0))
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
	return w
}

func wireHolders(hs []sessionlocks.Holder) []Holder {
	out := make([]Holder, 0, len(hs))
	for _, h := range hs {
		out = append(out, wireHolder(h))
	}
	return out
}

func wireSession(s sessionlocks.Session) Session {
	return Session{
		ID:         s.ID,
		Dir:        s.Dir,
		Name:       s.Name,
		CWD:        s.CWD,
		Repository: s.Repository,
		Branch:     s.Branch,
		ClientName: s.ClientName,
		CreatedAt:  wireTime(s.CreatedAt),
		UpdatedAt:  wireTime(s.UpdatedAt),
		State:      SessionState(s.State),
		Conflict:   s.Conflict,
		Holders:    wireHolders(s.Holders),

		HoldersOmitted: s.HoldersOmitted,
	}
}

func wireSessions(ss []sessionlocks.Session) []Session {
	out := make([]Session, 0, len(ss))
	for _, s := range ss {
		out = append(out, wireSession(s))
	}
	return out
}

func wireReclaim(r sessionlocks.ReclaimResult) *ReclaimStaleResult {
	out := &ReclaimStaleResult{
		Reclaimed: wireHolders(r.Reclaimed),
		Kept:      wireHolders(r.Kept),
		Failed:    make([]ReclaimFailure, 0, len(r.Failed)),
	}
	for _, f := range r.Failed {
		msg := "unknown error"
		if f.Err != nil {
			msg = f.Err.Error()
		}
		out.Failed = append(out.Failed, ReclaimFailure{Holder: wireHolder(f.Holder), Error: msg})
	}
	out.Cancelled = r.Cancelled
	out.Totals = ReclaimTotals{Reclaimed: r.Totals.Reclaimed, Kept: r.Totals.Kept, Failed: r.Totals.Failed}
	return out
}

func wireForce(id string, r sessionlocks.ForceResult) *ForceResumeResult {
	out := &ForceResumeResult{
		SessionID:      id,
		Removed:        wireHolders(r.Removed),
		Kept:           wireHolders(r.Kept),
		RemovedOmitted: r.RemovedOmitted,
		KeptOmitted:    r.KeptOmitted,
		Terminated:     pids(r.Exited),
		Signalled:      pids(r.Signalled),
		Exited:         pids(r.Exited),
		StillRunning:   pids(r.StillRunning),
		Killed:         r.Killed,
		NotSignalled:   make([]NotSignalled, 0, len(r.NotSignalled)),
		Session:        wireSession(r.Session),
	}
	for _, n := range r.NotSignalled {
		out.NotSignalled = append(out.NotSignalled, NotSignalled{PID: n.PID, Why: n.Why})
	}
	return out
}

// pids is a list of pids for a required field: [] rather than null.
func pids(p []int) []int {
	if p == nil {
		return []int{}
	}
	return p
}

// wireCanResume is canResume's answer for a session judged afresh.
func wireCanResume(ss sessionlocks.Session, now time.Time) *CanResumeResult {
	return &CanResumeResult{
		SessionID:      ss.ID,
		CanResume:      ss.State.CanResume(),
		State:          SessionState(ss.State),
		Conflict:       ss.Conflict,
		Holders:        wireHolders(ss.Holders),
		Message:        resumeMessage(ss, now),
		Token:          ss.Token(),
		HoldersOmitted: ss.HoldersOmitted,
	}
}

func wireChange(c watch.Change) SessionsChangedParams {
	removed := c.Removed
	if removed == nil {
		removed = []string{}
	}
	return SessionsChangedParams{Changed: wireSessions(c.Changed), Removed: removed}
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

// WireSession is s as the protocol gives it (listSessions, canResume): the
// CLI's `list --json` and `explain --json` print it, so that a script reads
// what the IDE reads.
func WireSession(s sessionlocks.Session) Session { return wireSession(s) }

// ResumeMessage is canResume's message for s, judged at now: `explain`
// shows the sentence the IDE shows.
func ResumeMessage(s sessionlocks.Session, now time.Time) string { return resumeMessage(s, now) }

// resumeMessage is canResume's one sentence for the IDE's prompt. Clock
// times are local: the person reading the prompt sits at this machine.
func resumeMessage(s sessionlocks.Session, now time.Time) string {
	var live, unknown, stale []sessionlocks.Holder
	for _, h := range s.Holders {
		switch h.Verdict {
		case sessionlocks.Live:
			live = append(live, h)
		case sessionlocks.Unknown:
			unknown = append(unknown, h)
		default:
			stale = append(stale, h)
		}
	}
	switch {
	case len(live) > 0:
		msg := "In use by " + describeHolder(live[0], now)
		if n := len(live) - 1; n > 0 {
			msg += fmt.Sprintf(" and %d other %s", n, plural(n, "process", "processes"))
		}
		if s.Conflict {
			msg += " (more than one process holds it)"
		}
		return msg + "."
	case len(unknown) > 0:
		h := unknown[0]
		msg := "Might be in use by " + describeHolder(h, now)
		if n := len(unknown) - 1; n > 0 {
			msg += fmt.Sprintf(" and %d other %s", n, plural(n, "process", "processes"))
		}
		msg += ": cannot tell"
		if d := strings.TrimRight(samePID(h.Detail, h.PID), "."); d != "" {
			msg += " (" + d + ")"
		}
		return msg + "."
	case len(stale) > 0:
		pids := make([]string, len(stale))
		for i, h := range stale {
			pids[i] = fmt.Sprint(h.PID)
		}
		return fmt.Sprintf("Not in use: the %s left by %s %s %s stale and can be reclaimed.",
			plural(len(stale), "lock", "locks"), plural(len(stale), "pid", "pids"), strings.Join(pids, ", "),
			plural(len(stale), "is", "are"))
	}
	return "Not in use: no process holds this session."
}

// samePID says "it" for pid in a detail that follows "pid N" in the
// message, which then names the pid once, not three times.
func samePID(detail string, pid int) string {
	re := regexp.MustCompile(`\bpid ` + strconv.Itoa(pid) + `\b`)
	return re.ReplaceAllString(detail, "it")
}

// describeHolder says "pid 4242 (copilot), started 10:02".
func describeHolder(h sessionlocks.Holder, now time.Time) string {
	out := fmt.Sprintf("pid %d", h.PID)
	if p := h.Process; p != nil {
		if name := commandName(p); name != "" {
			out += " (" + name + ")"
		}
		if !p.StartedAt.IsZero() {
			out += ", started " + clock(p.StartedAt, now)
		}
	}
	return out
}

func commandName(p *sessionlocks.Process) string {
	arg0 := ""
	if len(p.Argv) > 0 {
		arg0 = p.Argv[0]
	} else if i := strings.Index(strings.ToLower(p.Command), ".exe"); i >= 0 {
		arg0 = p.Command[:i+len(".exe")] // a Windows path may contain spaces
	} else if f := strings.Fields(p.Command); len(f) > 0 {
		arg0 = f[0]
	}
	// filepath.Base does not split on '\' off Windows; a Windows path may be
	// reported anywhere the tests run.
	if i := strings.LastIndexAny(arg0, `/\`); i >= 0 {
		arg0 = arg0[i+1:]
	}
	return arg0
}

func clock(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	y1, m1, d1 := t.Date()
	y2, m2, d2 := now.Date()
	switch {
	case y1 == y2 && m1 == m2 && d1 == d2:
		return t.Format("15:04")
	case y1 == y2:
		return t.Format("Jan 2 15:04")
	}
	return t.Format("Jan 2 2006 15:04")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// toWireError maps an engine error onto a JSON-RPC error, or returns nil
// when it is none the protocol names (the caller answers -32603).
func toWireError(err error) error {
	var (
		je  *Error
		ide *sessionlocks.IDError
		nfe *sessionlocks.NotFoundError
		sde *sessionlocks.StateDirError
		fe  *sessionlocks.FileError
		ce  *sessionlocks.ChangedError
	)
	switch {
	case errors.As(err, &je):
		return err
	case errors.As(err, &ide):
		return paramsError("", "%s", ide.Error())
	case errors.As(err, &nfe):
		return newError(CodeSessionNotFound, err.Error(), &ErrorData{SessionID: nfe.ID, StateDir: nfe.Dir})
	case errors.Is(err, sessionlocks.ErrNotFound):
		return newError(CodeSessionNotFound, err.Error(), nil)
	case errors.As(err, &sde):
		cause := osError(sde.Err)
		return newError(CodeStateDir, fmt.Sprintf("state directory %s unreadable: %s", sde.Path, cause), &ErrorData{Path: sde.Path, Error: cause})
	case errors.Is(err, sessionlocks.ErrStateDir):
		return newError(CodeStateDir, err.Error(), nil)
	case errors.As(err, &fe):
		cause := osError(fe.Err)
		return newError(CodeFileOp, fmt.Sprintf("%s %s: %s", fe.Op, fe.Path, cause), &ErrorData{Path: fe.Path, Op: fe.Op, Error: cause})
	case errors.Is(err, sessionlocks.ErrBusy):
		return newError(CodeSessionBusy, err.Error(), nil)
	case errors.As(err, &ce):
		e := &Error{Code: CodeSessionChanged, Message: "session changed: " + resumeMessage(ce.Session, time.Now()) + " Nothing was done; ask again with the answer in data."}
		e.SetError(wireCanResume(ce.Session, time.Now()))
		return e
	case errors.Is(err, sessionlocks.ErrInvalidID):
		return paramsError("", "%s", err.Error())
	}
	return nil
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
