// Command sessionlocks tells whether GitHub Copilot CLI sessions are in use and
// reclaims the locks crashed sessions leave behind. The IDE runs `sessionlocks
// serve` and speaks JSON-RPC to it over stdio; people use `repl`, `call` and
// `list` to look at the same thing by hand.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// A command is one subcommand. Each lives in its own file and registers
// itself in init, so that adding one touches no other file.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
	hidden  bool // internal helpers (the demo's fake CLI) are not listed
}

var commands = map[string]command{}

func register(name string, c command) {
	if _, dup := commands[name]; dup {
		panic("duplicate command " + name)
	}
	commands[name] = c
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
	fmt.Fprintln(w, "usage: sessionlocks <command> [flags]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nWhy does the IDE say a session is in use? `sessionlocks list`, then")
	fmt.Fprintln(w, "`sessionlocks explain ID` with an id as list prints it.")
	fmt.Fprintln(w, "Run `sessionlocks <command> -h` for a command's flags.")
}

// newFlags makes a command's flag set; usage writes the command's help
// (ending in fs.PrintDefaults) to fs.Output(). parseFlags decides where
// that goes.
func newFlags(name string, usage func(fs *flag.FlagSet)) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() { usage(fs) }
	return fs
}

// parseFlags parses a command's arguments, flags anywhere among them (see
// parseArgs). Help asked for (-h, --help) goes to stdout and the command is
// done with 0, as it did what was asked; after a mistake the error and the
// usage go to stderr and the command is done with 2.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (pos []string, code int, done bool) {
	usage := fs.Usage
	fs.Usage = func() {} // shown below, once, where it belongs
	defer func() { fs.Usage = usage }()
	fs.SetOutput(stderr)
	pos, err := parseArgs(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		usage()
		fs.SetOutput(stderr)
		return nil, 0, true
	case err != nil:
		usage()
		return nil, 2, true
	}
	return pos, 0, false
}

// noArgs refuses positional arguments a command does not take: done with 2.
func noArgs(name string, pos []string, stderr io.Writer) bool {
	if len(pos) == 0 {
		return false
	}
	fmt.Fprintf(stderr, "sessionlocks %s: unexpected argument %q; see sessionlocks %s -h\n", name, pos[0], name)
	return true
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
