// Command sessionlocks tells whether GitHub Copilot CLI sessions are in use and
// reclaims the locks crashed sessions leave behind. The IDE runs `sessionlocks
// serve` and speaks JSON-RPC to it over stdio; people use `repl`, `call` and
// `list` to look at the same thing by hand.
package main

import (
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
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
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
	fmt.Fprintln(w, "\nRun `sessionlocks <command> -h` for a command's flags.")
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
