package main

// `sessionlocks list`: the table of sessions, or their full ids and JSON;
// and the text helpers explain shares.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/escape"
	"github.com/copilot-ide/sessionlocks/rpc"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

func runList(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sessionlocks list", `usage: sessionlocks list [--state-dir DIR] [--all] [--wide | --json]

Prints one line per session that has lock files: its id (shortest unique
prefix, at least 8 characters; --wide prints it whole), name, state, the PIDs
named by its locks, why each lock was judged as it was, and when the session
was last updated. Any id it prints, or any unique prefix of one, is accepted
by explain, call and the REPL: sessionlocks explain ID says why in full.`)
	stateDir := fs.String("state-dir", "", stateDirHelp)
	all := fs.Bool("all", false, "also list free sessions (no lock files)")
	wide := fs.Bool("wide", false, "print full session ids")
	asJSON := fs.Bool("json", false, "print the sessions as JSON, as listSessions gives them (full ids), with stateDir and stateDirExists")
	if code, done := parseNoArgs(fs, args, stdout, stderr); done {
		return code
	}
	e, err := cliEngine(*stateDir, stderr)
	var sessions []sessionlocks.Session
	if err == nil {
		sessions, err = e.List(context.Background(), sessionlocks.ListOptions{})
	}
	if err != nil {
		say(stderr, "sessionlocks list: %v", err)
		return 1
	}
	st, shown := e.Status(), sessions
	if !*all {
		shown = slices.DeleteFunc(slices.Clone(sessions), func(s sessionlocks.Session) bool { return s.State == sessionlocks.StateFree })
	}
	if *asJSON {
		out := listJSON{StateDir: st.StateDir, StateDirExists: st.StateDirExists, Sessions: []rpc.Session{}}
		for _, s := range shown {
			out.Sessions = append(out.Sessions, rpc.WireSession(s))
		}
		b, _ := json.Marshal(out)
		return printJSON(stdout, b)
	}
	writeTable(stdout, st.StateDir, sessions, shown, *wide, time.Now())
	if !st.StateDirExists {
		say(stdout, "%s", missingDirNote(st.StateDir))
	}
	return 0
}

// listJSON is list --json: the sessions as the protocol gives them.
type listJSON struct {
	StateDir       string        `json:"stateDir"`
	StateDirExists bool          `json:"stateDirExists"`
	Sessions       []rpc.Session `json:"sessions"`
}

// cliEngine is the engine list and explain read with: warnings to stderr.
func cliEngine(dir string, stderr io.Writer) (*sessionlocks.Engine, error) {
	ef := engineFlags{stateDir: dir, settle: sessionlocks.DefaultSettle, cacheTTL: sessionlocks.DefaultCacheTTL}
	return ef.engine(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// missingDirNote says why nothing is found in a state dir that does not
// exist, and what to check: the IDE, started from a dock, and a terminal may
// disagree on COPILOT_HOME.
func missingDirNote(dir string) string {
	return fmt.Sprintf("note: the state directory %s does not exist: check --state-dir, and COPILOT_HOME (the IDE may see another)", dir)
}

// writeTable prints the sessions shown (of all the sessions), newest first
// as List returns them. Every cell is escaped before tabwriter aligns the
// columns by what it shows.
func writeTable(w io.Writer, dir string, sessions, shown []sessionlocks.Session, wide bool, now time.Time) {
	hidden := len(sessions) - len(shown)
	switch {
	case len(sessions) == 0:
		say(w, "no sessions in %s", dir)
		return
	case len(shown) == 0:
		say(w, "no session in %s holds a lock (%d free; --all %s)", dir, hidden, plural(hidden, "lists it", "lists them"))
		return
	}
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.ID
	}
	short := uniquePrefixes(ids, 8)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tHOLDERS\tREASON\tUPDATED")
	marks := map[string]bool{}
	for _, s := range shown {
		id := short[s.ID]
		if wide {
			id = s.ID
		}
		state := stateText(s)
		marks[state[len(s.State):]] = true
		pids, reasons := holderCells(s)
		cells := []string{id, clip(s.Name, 40), state, pids, reasons, ago(s.UpdatedAt, now)}
		for i, c := range cells {
			cells[i] = escape.Text(cmp.Or(c, "-"))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	if hidden > 0 {
		fmt.Fprintf(w, "(%d free %s not shown; --all %s)\n", hidden, plural(hidden, "session", "sessions"), plural(hidden, "lists it", "lists them"))
	}
	if marks["!"] {
		fmt.Fprintln(w, "! more than one live process holds this session")
	}
	if marks["*"] {
		fmt.Fprintln(w, "* left running after its launcher exited, with nobody attached: sessionlocks explain ID says where")
	}
}

// stateText is the session's state, marked "!" when processes conflict,
// "*" when a live holder is an orphan.
func stateText(s sessionlocks.Session) string {
	switch {
	case s.Conflict:
		return string(s.State) + "!"
	case slices.ContainsFunc(s.Holders, orphaned):
		return string(s.State) + "*"
	}
	return string(s.State)
}

func orphaned(h sessionlocks.Holder) bool { return h.Orphaned != nil && *h.Orphaned }

// holderCells are "4242,4243", the pids the session's locks name, and
// "hold-locked,pid-reused", each rule that decided, once.
func holderCells(s sessionlocks.Session) (pids, reasons string) {
	var p, r []string
	for _, h := range s.Holders {
		p = append(p, strconv.Itoa(h.PID))
		if !slices.Contains(r, string(h.Reason)) {
			r = append(r, string(h.Reason))
		}
	}
	return strings.Join(p, ","), strings.Join(r, ",")
}

// uniquePrefixes gives each id the shortest prefix of at least n characters
// that no other id shares, so that a short id can be pasted into the REPL.
func uniquePrefixes(ids []string, n int) map[string]string {
	out := make(map[string]string, len(ids))
	sorted := slices.Sorted(slices.Values(ids))
	for i, id := range sorted {
		l := n
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(sorted) {
				l = max(l, commonPrefix(id, sorted[j])+1)
			}
		}
		out[id] = id[:min(l, len(id))]
	}
	return out
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// clip is s on one line (white space runs, line breaks included, become one
// space), at most n characters of it.
func clip(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

// ago is how long before now t was, in the largest unit that fits.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.Local().Format("2006-01-02 15:04")
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
	return t.Local().Format("2006-01-02")
}
