package main

// `sessionlocks schema` and `sessionlocks version`: what is built into the binary.

import (
	"fmt"
	"io"
	"runtime"

	"github.com/copilot-ide/sessionlocks/internal/version"
	"github.com/copilot-ide/sessionlocks/schema"
)

func runSchema(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sessionlocks schema", `usage: sessionlocks schema

Prints the OpenRPC document that rpc.discover returns: every method, its params,
result and errors, and the sessionsChanged notification.`)
	if code, done := parseNoArgs(fs, args, stdout, stderr); done {
		return code
	}
	if _, err := stdout.Write(schema.OpenRPC); err != nil {
		say(stderr, "sessionlocks schema: %v", err)
		return 1
	}
	return 0
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sessionlocks version", "usage: sessionlocks version\n\nPrints the version, the Go release it was built with, and the platform.")
	if code, done := parseNoArgs(fs, args, stdout, stderr); done {
		return code
	}
	fmt.Fprintf(stdout, "sessionlocks %s %s %s/%s\n", version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}
