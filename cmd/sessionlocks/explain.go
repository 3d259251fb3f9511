package main

// `sessionlocks explain ID`: why one session is judged as it is, for the
// person whose IDE keeps asking to force resume. Per holder the verdict,
// the evidence, the rule that decided and what the user can do, from the
// engine's decision (Engine.Session), the one canResume answers from.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/copilot-ide/sessionlocks/rpc"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

func init() {
	register("explain", command{
		summary: "say why one session is in use, stale or unknown, and what you can do",
		run:     runExplain,
	})
}

func runExplain(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sessionlocks explain", func(fs *flag.FlagSet) {
		fmt.Fprintln(fs.Output(), `usage: sessionlocks explain [--state-dir DIR] [--json] ID

Judges one session afresh, as canResume does, and explains it: for each lock
holder the verdict, the evidence (the process, its start and command line,
the lock's age, the .hold's kernel lock), the rule that decided, and what you
can do. ID is a session id or any unique prefix of one, as sessionlocks list
prints them.

flags:`)
		fs.PrintDefaults()
	})
	stateDir := fs.String("state-dir", "", "session-state directory (default $COPILOT_HOME/session-state, else ~/.copilot/session-state)")
	asJSON := fs.Bool("json", false, "print the explanation as JSON")
	pos, code, done := parseFlags(fs, args, stdout, stderr)
	if done {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "sessionlocks explain: want one session id (or a unique prefix of one), e.g. sessionlocks explain 5e55c0de; sessionlocks list prints them")
		return 2
	}
	e, err := cliEngine(*stateDir, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "sessionlocks explain:", err)
		return 1
	}
	id, err := e.Resolve(pos[0])
	var s sessionlocks.Session
	if err == nil {
		s, err = e.Judge(context.Background(), id)
	}
	if err != nil {
		fmt.Fprintln(stderr, "sessionlocks explain:", err)
		var nf *sessionlocks.NotFoundError
		switch {
		case errors.As(err, &nf) && nf.NoDir:
			fmt.Fprintln(stderr, missingDirNote(e.Status().StateDir))
		case errors.As(err, &nf):
			fmt.Fprintln(stderr, "sessionlocks list --all lists the sessions there")
		}
		return 1
	}
	x := explainSession(e, s, time.Now())
	if *asJSON {
		b, err := json.Marshal(x)
		if err != nil {
			return 1
		}
		return printJSON(stdout, b, isTerminal(stdout))
	}
	writeExplanation(stdout, x, s, time.Now())
	return 0
}

// explanation is explain's answer; --json prints it as it is.
type explanation struct {
	StateDir       string `json:"stateDir"`
	StateDirExists bool   `json:"stateDirExists"`
	// Session is the session as canResume judges it (holders with owners).
	Session   rpc.Session `json:"session"`
	CanResume bool        `json:"canResume"`
	// Message is canResume's sentence for the IDE's prompt.
	Message string `json:"message"`
	// Holders explain session.holders, in the same order.
	Holders []explainedHolder `json:"holders"`
	// Next says what the user can do about the session as a whole.
	Next string `json:"next"`
}

// explainedHolder is one holder's evidence, rule and remedy.
type explainedHolder struct {
	PID     int    `json:"pid"`
	Verdict string `json:"verdict"`
	// Rule names the rule that decided (the holder's reason); Why is its sentence.
	Rule string `json:"rule"`
	Why  string `json:"why"`
	// LockAgeMs is how long ago the lock was written.
	LockAgeMs int64 `json:"lockAgeMs"`
	// Hold is the .hold's state: none, locked, unlocked or unprobed.
	Hold string `json:"hold"`
	// Action is what the user can do about this holder.
	Action string `json:"action"`
}

// The states of a holder's .hold.
const (
	holdNone     = "none"     // no .hold: an old-format lock
	holdLocked   = "locked"   // a process holds its kernel lock
	holdUnlocked = "unlocked" // nobody holds its kernel lock
	holdUnprobed = "unprobed" // not probed: too young, or unreadable (why says)
)

func holdState(h sessionlocks.Holder) string {
	switch {
	case h.HoldFile == "":
		return holdNone
	case h.Reason == sessionlocks.ReasonHoldLocked:
		return holdLocked
	case h.HoldFree():
		return holdUnlocked
	}
	return holdUnprobed
}

func explainSession(e *sessionlocks.Engine, s sessionlocks.Session, now time.Time) explanation {
	x := explanation{
		StateDir:       e.Status().StateDir,
		StateDirExists: e.Status().StateDirExists,
		Session:        rpc.WireSession(s),
		CanResume:      s.State.CanResume(),
		Message:        s.Message(now),
		Holders:        make([]explainedHolder, 0, len(s.Holders)),
	}
	stale := 0
	for _, h := range s.Holders {
		if h.Verdict == sessionlocks.Stale {
			stale++
		}
		x.Holders = append(x.Holders, explainedHolder{
			PID:       h.PID,
			Verdict:   string(h.Verdict),
			Rule:      string(h.Reason),
			Why:       h.Detail,
			LockAgeMs: now.Sub(h.LockWrittenAt).Milliseconds(),
			Hold:      holdState(h),
			Action:    holderAction(s, h),
		})
	}
	switch {
	case s.State == sessionlocks.StateFree:
		x.Next = "Nothing holds it: the IDE can resume it."
	case s.State == sessionlocks.StateStale:
		x.Next = fmt.Sprintf("Only stale locks hold it: the IDE can resume it; `sessionlocks call reclaimStale %s` removes them (%d).", s.ID, stale)
	default:
		x.Next = "The IDE asks before resuming it: " + x.Message
	}
	return x
}

// holderAction says what the user can do about h, naming the command.
func holderAction(s sessionlocks.Session, h sessionlocks.Holder) string {
	where := s.CWD
	if where == "" {
		where = s.Dir
	}
	switch {
	case h.Verdict == sessionlocks.Stale:
		return fmt.Sprintf("`sessionlocks call reclaimStale %s` would remove it (it removes only locks proven stale).", s.ID)
	case h.Reason == sessionlocks.ReasonStarting:
		return "A CLI is opening the session now: wait a few seconds and ask again."
	case h.Verdict == sessionlocks.Live && h.Owner != nil:
		return fmt.Sprintf("This CLI is alive in %s: close it, or `sessionlocks call forceResume %s terminate=true` stops pid %d (proven to hold the session) and takes the session over.", where, s.ID, h.Owner.PID)
	case h.Verdict == sessionlocks.Live:
		return fmt.Sprintf("This CLI is alive in %s: close it, or `sessionlocks call forceResume %s` takes the session over while it runs (it signals nothing: %s).", where, s.ID, orDash(h.NoOwner))
	}
	return fmt.Sprintf("Nothing removes it by itself, since pid %d may still be using the session: if you know it is not, `sessionlocks call forceResume %s` removes the lock.", h.PID, s.ID)
}

// writeExplanation prints x for a person: the session, then each holder.
func writeExplanation(w io.Writer, x explanation, s sessionlocks.Session, now time.Time) {
	fmt.Fprintf(w, "session %s", s.ID)
	if s.Name != "" {
		fmt.Fprintf(w, " %q", clipText(s.Name, 60))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "  %s:\t%s\n", k, v)
		}
	}
	row("dir", s.Dir)
	row("cwd", s.CWD)
	row("updated", ago(s.UpdatedAt, now))
	row("state", stateText(s)+": "+x.Message)
	tw.Flush()
	for i, h := range s.Holders {
		xh := x.Holders[i]
		fmt.Fprintf(w, "\npid %d: %s, by rule %s\n", h.PID, h.Verdict, h.Reason)
		row("why", h.Detail)
		row("process", processText(h, now))
		row("lock", fmt.Sprintf("%s, written %s (%s)", filepath.Base(h.LockFile), ago(h.LockWrittenAt, now), stampText(h.LockWrittenAt)))
		if h.HoldFile != "" {
			row(".hold", filepath.Base(h.HoldFile)+", "+xh.Hold)
		} else {
			row(".hold", "none")
		}
		if o := h.Owner; o != nil {
			row("owner", fmt.Sprintf("pid %d: %s", o.PID, o.Evidence))
		}
		row("you can", xh.Action)
		tw.Flush()
	}
	if n := s.HoldersOmitted; n > 0 {
		fmt.Fprintf(w, "\n(%d more holders not listed; the state counts them all)\n", n)
	}
	fmt.Fprintf(w, "\n%s\n", x.Next)
	if !x.StateDirExists {
		fmt.Fprintln(w, missingDirNote(x.StateDir))
	}
}

// processText is "started 2026-11-20 06:01:02 (2d ago): copilot --resume",
// or why there is no process to show.
func processText(h sessionlocks.Holder, now time.Time) string {
	p := h.Process
	if p == nil {
		return "none: not running, or not examinable"
	}
	out := "start unknown"
	if !p.StartedAt.IsZero() {
		out = fmt.Sprintf("started %s (%s)", stampText(p.StartedAt), ago(p.StartedAt, now))
	}
	cmd := strings.TrimSpace(p.Command)
	if cmd == "" {
		cmd = "command line unreadable"
	}
	return out + ": " + clipText(cmd, 160)
}

func stampText(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }
