// Command sessionlocks tells whether GitHub Copilot CLI sessions are in use and
// reclaims the locks crashed sessions leave behind. The IDE runs `sessionlocks
// serve` and speaks JSON-RPC to it over stdio; people use `repl`, `call`,
// `list` and `explain` to look at the same thing by hand. This file holds the
// command table and the flag handling every command shares.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/copilot-ide/sessionlocks/internal/escape"
	"github.com/copilot-ide/sessionlocks/internal/fakecli"
)

// A command is one subcommand, each in its own file.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands are the subcommands; those named with a leading _ are not listed.
var commands = map[string]command{
	"serve":    {"speak JSON-RPC on stdin/stdout (what the IDE runs)", runServe},
	"list":     {"print a table of sessions that hold locks (--all: every session)", runList},
	"explain":  {"say why one session is in use, stale or unknown, and what you can do", runExplain},
	"call":     {"run one JSON-RPC request in-process and print the result", runCall},
	"repl":     {"type JSON-RPC requests at a sessionlocks serve it starts (--demo for a sandbox)", runREPL},
	"schema":   {"print the protocol's OpenRPC document", runSchema},
	"version":  {"print the version, Go version and platform", runVersion},
	"_fakecli": {"behave like a Copilot CLI holding a session (for the demo)", fakecli.Run},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stderr) // a mistake: nothing was asked for
		return 2
	case len(args) == 2 && args[0] == "help" && commands[args[1]].run != nil:
		return commands[args[1]].run([]string{"-h"}, stdout, stderr) // help CMD is CMD -h
	case args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help":
		// Asked for: on stdout, so that `sessionlocks --help | less` shows it.
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "sessionlocks: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: sessionlocks <command> [flags]\n\ncommands:")
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		if !strings.HasPrefix(n, "_") {
			fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
		}
	}
	fmt.Fprintln(w, "\nWhy does the IDE say a session is in use? `sessionlocks list`, then")
	fmt.Fprintln(w, "`sessionlocks explain ID` with an id as list prints it.")
	fmt.Fprintln(w, "Run `sessionlocks <command> -h` for a command's flags.")
}

// newFlags makes a command's flag set, whose usage is text, then its flags.
func newFlags(name, text string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), text+"\n\nflags:")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses a command's arguments, flags anywhere among them (see
// parseArgs), and says whether the command is done, with what exit code:
// help asked for goes to stdout with 0; a mistake (escaped: it echoes what
// was typed) and the usage go to stderr with 2.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (pos []string, code int, done bool) {
	fs.SetOutput(io.Discard) // the flag package would print the error raw
	pos, err := parseArgs(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		return nil, 0, true
	case err != nil:
		say(stderr, "%v", err)
		fs.SetOutput(stderr)
		fs.Usage()
		return nil, 2, true
	}
	fs.SetOutput(stderr)
	return pos, 0, false
}

// parseNoArgs is parseFlags for a command that takes no arguments: one is
// a mistake, done with 2.
func parseNoArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, done bool) {
	pos, code, done := parseFlags(fs, args, stdout, stderr)
	if !done && len(pos) > 0 {
		say(stderr, "%s: unexpected argument %q; see %s -h", fs.Name(), pos[0], fs.Name())
		return 2, true
	}
	return code, done
}

// parseArgs parses flags wherever they stand among the arguments, so that
// `sessionlocks call canResume '{...}' --state-dir /tmp/x` works as people
// type it; the flag package alone stops at the first non-flag. Everything
// after "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// say prints one line for a person, escaped: messages here quote paths,
// names and what was typed.
func say(w io.Writer, format string, a ...any) {
	fmt.Fprintln(w, escape.Text(strings.TrimSuffix(fmt.Sprintf(format, a...), "\n")))
}
