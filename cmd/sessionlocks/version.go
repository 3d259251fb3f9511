package main

import (
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
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: sessionlocks version")
		return 2
	}
	fmt.Fprintf(stdout, "sessionlocks %s %s %s/%s\n", version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}
