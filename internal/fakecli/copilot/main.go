// Command copilot is the fake Copilot CLI that tests build under the CLI's own
// name; see package fakecopilot.
package main

import (
	"os"

	"github.com/copilot-ide/sessionlocks/internal/testbin/fakecopilot"
)

func main() { os.Exit(fakecopilot.Run(os.Args[1:], os.Stdout, os.Stderr)) }
