// Command ensure installs the pinned Copilot CLI for `make test-realcli` and
// prints the path of its binary. When the CLI cannot be had here (npm
// registry unreachable, npm missing, platform not pinned) it prints
// "SKIP: <why>" on stderr, nothing on stdout, and exits 0, so that the
// Makefile skips the conformance tests instead of failing them. (An exit code
// would not do: `go run` turns every failure into 1.)
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/copilot-ide/sessionlocks/internal/realcli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	in, err := realcli.Ensure(ctx, os.Stderr)
	switch {
	case errors.Is(err, realcli.ErrUnavailable):
		fmt.Fprintf(os.Stderr, "SKIP: real Copilot CLI %s conformance tests: %v\n", realcli.Version, err)
		return
	case err != nil:
		fmt.Fprintf(os.Stderr, "realcli: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(in.Binary)
}
