// Command copilot is the fake Copilot CLI that tests build under the CLI's own
// name; see package fakecli.
package main

import (
	"os"

	"github.com/copilot-ide/sessionlocks/internal/fakecli"
)

func main() { os.Exit(fakecli.Run(os.Args[1:], os.Stdout, os.Stderr)) }
