package main

// `sessionlocks explain ID`: for the person whose IDE keeps asking to force
// resume, why one session is judged as it is (canResume's judgement), holder
// by holder, and what they can do.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/escape"
	"github.com/copilot-ide/sessionlocks/rpc"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

func runExplain(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sessionlocks explain", `usage: sessionlocks explain [--state-dir DIR] [--json] ID

Judges one session afresh, as canResume does, and explains it: for each lock
holder the verdict, the evidence (the process, its start and command line,
the lock's age, the .hold's kernel lock), who started it and its terminal,
the rule that decided, and what you can do. ID is a session id or any unique
prefix of one, as sessionlocks list prints them.`)
	stateDir := fs.String("state-dir", "", stateDirHelp)
	asJSON := fs.Bool("json", false, "print the explanation as JSON")
	pos, code, done := parseFlags(fs, args, stdout, stderr)
	if done {
		return code
	}
	if len(pos) != 1 {
		say(stderr, "sessionlocks explain: want one session id (or a unique prefix of one), e.g. sessionlocks explain 5e55c0de; sessionlocks list prints them")
		return 2
	}
	e, err := cliEngine(*stateDir, stderr)
	if err != nil {
		say(stderr, "sessionlocks explain: %v", err)
		return 1
	}
	id, err := e.Resolve(pos[0])
	var s sessionlocks.Session
	if err == nil {
		s, err = e.Judge(context.Background(), id)
	}
	if err != nil {
		say(stderr, "sessionlocks explain: %v", err)
		var nf *sessionlocks.NotFoundError
		switch {
		case errors.As(err, &nf) && nf.NoDir:
			say(stderr, "%s", missingDirNote(e.Status().StateDir))
		case errors.As(err, &nf):
			say(stderr, "sessionlocks list --all lists the sessions there")
		}
		return 1
	}
	now := time.Now()
	x := explainSession(e.Status(), s, now)
	if *asJSON {
		b, _ := json.Marshal(x)
		return printJSON(stdout, b)
	}
	writeExplanation(stdout, x, s, now)
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

// explainedHolder adds to one of session.holders (the same place in the
// list) what explain says about it beyond the wire's fields.
type explainedHolder struct {
	// Hold is the .hold's state: none, locked, unlocked or unprobed.
	Hold string `json:"hold"`
	// Attachment says, for a live holder, who started it, its terminal,
	// and why it is or is not taken for an orphan.
	Attachment string `json:"attachment,omitempty"`
	// Action is what the user can do about this holder.
	Action string `json:"action"`
}

// holdState is the state of a holder's .hold: none (an old-format lock),
// locked, unlocked, or unprobed (too young, or unreadable: why says).
func holdState(h sessionlocks.Holder) string {
	switch {
	case h.HoldFile == "":
		return "none"
	case h.Reason == sessionlocks.ReasonHoldLocked:
		return "locked"
	case h.HoldFree():
		return "unlocked"
	}
	return "unprobed"
}

func explainSession(st sessionlocks.Status, s sessionlocks.Session, now time.Time) explanation {
	x := explanation{
		StateDir:       st.StateDir,
		StateDirExists: st.StateDirExists,
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
		x.Holders = append(x.Holders, explainedHolder{Hold: holdState(h), Attachment: h.Attachment, Action: holderAction(s, h)})
	}
	switch s.State {
	case sessionlocks.StateFree:
		x.Next = "Nothing holds it: the IDE can resume it."
	case sessionlocks.StateStale:
		x.Next = fmt.Sprintf("Only stale locks hold it: the IDE can resume it; `sessionlocks call reclaimStale %s` removes them (%d).", s.ID, stale)
	default:
		x.Next = "The IDE asks before resuming it: " + x.Message
	}
	return x
}

// holderAction says what the user can do about h, naming the command. A
// live CLI is closed where it runs, or stopped by forceResume's terminate
// where the process that holds it is proven: never taken over while it runs.
func holderAction(s sessionlocks.Session, h sessionlocks.Holder) string {
	switch {
	case h.Verdict == sessionlocks.Stale:
		return fmt.Sprintf("`sessionlocks call reclaimStale %s` would remove it (it removes only locks proven stale).", s.ID)
	case h.Reason == sessionlocks.ReasonStarting:
		return "A CLI is opening the session now, or has just exited: wait a few seconds and ask again."
	case h.Verdict == sessionlocks.Live && h.Owner != nil:
		stop := fmt.Sprintf("`sessionlocks call forceResume %s terminate=true` stops pid %d (proven to hold the session), then removes its locks.", s.ID, h.Owner.PID)
		if orphaned(h) {
			return fmt.Sprintf("Nobody is attached to this CLI: %s. %s", where(s, h), stop)
		}
		return fmt.Sprintf("Close this CLI where it runs: %s. Or %s", where(s, h), stop)
	case h.Verdict == sessionlocks.Live && orphaned(h):
		return fmt.Sprintf("Nobody is attached to this CLI: %s. If it is one you left running, end it yourself; sessionlocks will not, since it signals only a process proven to hold the session: %s.", where(s, h), strings.TrimSuffix(cmp.Or(h.NoOwner, "-"), "."))
	case h.Verdict == sessionlocks.Live:
		return fmt.Sprintf("Close this CLI where it runs: %s. sessionlocks will not stop it, since it signals only a process proven to hold the session: %s.", where(s, h), strings.TrimSuffix(cmp.Or(h.NoOwner, "-"), "."))
	}
	return fmt.Sprintf("Nothing removes it by itself, since pid %d may still be using the session: if you know it is not a CLI using this session, `sessionlocks call forceResume %s` removes the lock.", h.PID, s.ID)
}

// where says where a live holder runs: "pid 4242 (copilot) in /src/app,
// on terminal pts/3", or started by which process when it has no terminal.
func where(s sessionlocks.Session, h sessionlocks.Holder) string {
	out := fmt.Sprintf("pid %d", h.PID)
	if p := h.Process; p != nil && sessionlocks.CommandName(p) != "" {
		out += " (" + sessionlocks.CommandName(p) + ")"
	}
	if s.CWD != "" {
		out += " in " + s.CWD
	}
	switch la := h.Launcher; {
	case h.Terminal != "":
		out += ", on terminal " + h.Terminal
	case la != nil && la.Alive:
		out += fmt.Sprintf(", started by pid %d (%s)", la.PID, clip(la.Command, 60))
	}
	return out
}

// writeExplanation prints x for a person: the session, then each holder.
// Every value is escaped: names, paths, sentences and command lines come
// from the disk and from other processes.
func writeExplanation(w io.Writer, x explanation, s sessionlocks.Session, now time.Time) {
	fmt.Fprintf(w, "session %s", s.ID)
	if s.Name != "" {
		fmt.Fprintf(w, ` "%s"`, escape.Text(clip(s.Name, 60)))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "  %s:\t%s\n", k, escape.Text(v))
		}
	}
	row("dir", s.Dir)
	row("cwd", s.CWD)
	row("updated", ago(s.UpdatedAt, now))
	row("state", stateText(s)+": "+x.Message)
	tw.Flush()
	for i, h := range s.Holders {
		fmt.Fprintf(w, "\npid %d: %s, by rule %s\n", h.PID, h.Verdict, h.Reason)
		row("why", h.Detail)
		row("process", processText(h, now))
		row("lock", fmt.Sprintf("%s, written %s (%s)", filepath.Base(h.LockFile), ago(h.LockWrittenAt, now), stamp(h.LockWrittenAt)))
		hold := x.Holders[i].Hold
		if h.HoldFile != "" {
			hold = filepath.Base(h.HoldFile) + ", " + hold
		}
		row(".hold", hold)
		switch {
		case h.Owner != nil:
			row("owner", fmt.Sprintf("pid %d: %s", h.Owner.PID, h.Owner.Evidence))
		case h.Verdict == sessionlocks.Live:
			row("owner", "none proven: "+cmp.Or(h.NoOwner, "-"))
		}
		if h.Verdict == sessionlocks.Live {
			row("launcher", launcherText(h.Launcher))
			row("terminal", cmp.Or(h.Terminal, "none"))
			row("attached", h.Attachment)
		}
		row("you can", x.Holders[i].Action)
		tw.Flush()
	}
	if n := s.HoldersOmitted; n > 0 {
		fmt.Fprintf(w, "\n(%d more holders not listed; the state counts them all)\n", n)
	}
	fmt.Fprintf(w, "\n%s\n", escape.Text(x.Next))
	if !x.StateDirExists {
		say(w, "%s", missingDirNote(x.StateDir))
	}
}

// launcherText is "pid 4100, still running: code --type=…", or why there
// is none to show.
func launcherText(la *sessionlocks.Launcher) string {
	if la == nil {
		return "unknown: it had already been handed to another parent, or its parent could not be read"
	}
	state := map[bool]string{true: "still running", false: "exited"}[la.Alive]
	return fmt.Sprintf("pid %d, %s: %s", la.PID, state, clip(la.Command, 80))
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
		out = fmt.Sprintf("started %s (%s)", stamp(p.StartedAt), ago(p.StartedAt, now))
	}
	return out + ": " + cmp.Or(clip(p.Command, 160), "command line unreadable")
}

func stamp(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }
