package main

// `sessionlocks repl`: its flags; the console itself is internal/repl.

import (
	"context"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/copilot-ide/sessionlocks/internal/repl"
)

func runREPL(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sessionlocks repl", `usage: sessionlocks repl [--state-dir DIR] [--demo] [--no-color] [--log-level LEVEL] [--log-file FILE]

Starts "sessionlocks serve" and talks JSON-RPC to it over its stdin and stdout,
as the IDE does. Type .help once it is running. When stdin is not a terminal,
reads one command a line and exits at the end of input: 1 if a command failed.
At a terminal, input history is kept in <user config dir>/sessionlocks/history.
The server's log lines are shown as "serve: ..." (--log-level info shows every
verdict it gives and every lock it removes).`)
	stateDir := fs.String("state-dir", "", stateDirHelp)
	demo := fs.Bool("demo", false, "run on a throwaway state dir holding one session of each kind; removed on exit")
	noColor := fs.Bool("no-color", false, "never colour output (NO_COLOR in the environment does the same)")
	var lf logFlags
	lf.register(fs, "warn")
	if code, done := parseNoArgs(fs, args, stdout, stderr); done {
		return code
	}
	// Checked here, not by the serve it starts: a mistake is the REPL's usage error.
	if _, err := lf.slogLevel(); err != nil {
		say(stderr, "sessionlocks repl: %v", err)
		return 2
	}
	if *demo && *stateDir != "" {
		say(stderr, "sessionlocks repl: --demo makes its own state dir; drop --state-dir")
		return 2
	}
	exe, err := os.Executable()
	if err != nil {
		say(stderr, "sessionlocks repl: cannot find my own executable to run serve: %v", err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	var banner string
	if *demo {
		d, err := startDemo(exe)
		if err != nil {
			say(stderr, "sessionlocks repl --demo: %v", err)
			return 1
		}
		defer d.cleanup()
		*stateDir, banner = d.stateDir, d.banner()
	}

	out, ok := stdout.(*os.File)
	interactive := ok && repl.IsTerminal(os.Stdin) && repl.IsTerminal(out)
	history := ""
	if dir, err := os.UserConfigDir(); err == nil && interactive {
		history = filepath.Join(dir, "sessionlocks", "history")
	}
	return repl.Run(ctx, repl.Options{
		// An empty --state-dir is serve's default, which serve finds.
		Serve:       append([]string{exe, "serve", "--state-dir", *stateDir}, lf.args()...),
		In:          os.Stdin,
		Out:         stdout,
		Err:         stderr,
		Interactive: interactive,
		Color:       interactive && !*noColor && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb",
		HistoryFile: history,
		Banner:      banner,
	})
}
