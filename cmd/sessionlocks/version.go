package main

// `sessionlocks version`.

import (
	"flag"
	"fmt"
	"io"
	"runtime"

	"github.com/copilot-ide/sessionlocks/internal/version"
)

func init() {
	register("version", command{
		summary: "print the version, Go version and platform",
		run:     runVersion,
	})
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sessionlocks version", func(fs *flag.FlagSet) {
		fmt.Fprintln(fs.Output(), "usage: sessionlocks version\n\nPrints the version, the Go release it was built with, and the platform.")
	})
	pos, code, done := parseFlags(fs, args, stdout, stderr)
	if done {
		return code
	}
	if noArgs("version", pos, stderr) {
		return 2
	}
	fmt.Fprintf(stdout, "sessionlocks %s %s %s/%s\n", version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}
