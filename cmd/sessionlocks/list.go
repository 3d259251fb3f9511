package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

func init() {
	register("list", command{
		summary: "print a table of sessions that hold locks (--all: every session)",
		run:     runList,
	})
}

func runList(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sessionlocks list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: sessionlocks list [--state-dir DIR] [--all]

Prints one line per session that has lock files: its id (shortest unique
prefix, at least 8 characters), name, state, the PIDs named by its locks, why
each lock was judged as it was, and when the session was last updated.

flags:`)
		fs.PrintDefaults()
	}
	stateDir := fs.String("state-dir", "", "session-state directory (default $COPILOT_HOME/session-state, else ~/.copilot/session-state)")
	all := fs.Bool("all", false, "also list free sessions (no lock files)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sessionlocks list: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *stateDir == "" {
		var err error
		if *stateDir, err = sessionlocks.DefaultStateDir(); err != nil {
			fmt.Fprintln(stderr, "sessionlocks list:", err)
			return 1
		}
	}
	e := sessionlocks.New(sessionlocks.Options{
		StateDir: *stateDir,
		Logger:   slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	sessions, err := e.List(context.Background())
	if err != nil {
		fmt.Fprintln(stderr, "sessionlocks list:", err)
		return 1
	}
	writeTable(stdout, e.StateDir(), sessions, *all, time.Now())
	return 0
}

// writeTable prints the sessions, newest first as List returns them.
func writeTable(w io.Writer, dir string, sessions []sessionlocks.Session, all bool, now time.Time) {
	shown := sessions
	if !all {
		shown = slices.DeleteFunc(slices.Clone(sessions), func(s sessionlocks.Session) bool { return s.State == sessionlocks.StateFree })
	}
	hidden := len(sessions) - len(shown)
	switch {
	case len(sessions) == 0:
		fmt.Fprintf(w, "no sessions in %s\n", dir)
		return
	case len(shown) == 0:
		fmt.Fprintf(w, "no session in %s holds a lock (%d free; --all lists them)\n", dir, hidden)
		return
	}
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.ID
	}
	short := uniquePrefixes(ids, 8)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tHOLDERS\tREASON\tUPDATED")
	for _, s := range shown {
		state := string(s.State)
		if s.Conflict {
			state += "!"
		}
		var pids, reasons []string
		for _, h := range s.Holders {
			pids = append(pids, strconv.Itoa(h.PID))
			if r := string(h.Reason); !slices.Contains(reasons, r) {
				reasons = append(reasons, r)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", short[s.ID], clipText(orDash(s.Name), 40), state,
			orDash(strings.Join(pids, ",")), orDash(strings.Join(reasons, ",")), ago(s.UpdatedAt, now))
	}
	tw.Flush()
	if hidden > 0 {
		fmt.Fprintf(w, "(%d free sessions not shown; --all lists them)\n", hidden)
	}
	for _, s := range shown {
		if s.Conflict {
			fmt.Fprintln(w, "! more than one live process holds this session")
			break
		}
	}
}

// uniquePrefixes gives each id the shortest prefix of at least n characters
// that no other id shares, so that a short id can be pasted into the REPL.
func uniquePrefixes(ids []string, n int) map[string]string {
	out := make(map[string]string, len(ids))
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
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

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clipText(s string, n int) string {
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
