package main

import (
	"io"

	"github.com/copilot-ide/sessionlocks/internal/fakecli"
)

// _fakecli is the demo's stand-in for a running Copilot CLI: the same binary,
// so that `repl --demo` needs nothing else installed.
func init() {
	register("_fakecli", command{
		summary: "behave like a Copilot CLI holding a session (for the demo)",
		hidden:  true,
		run: func(args []string, stdout, stderr io.Writer) int {
			return fakecli.Run(args, stdout, stderr)
		},
	})
}
