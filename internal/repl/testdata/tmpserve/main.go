// Temporary stand-in for `sessionlocks serve` (deleted once serve lands).
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"

	"github.com/copilot-ide/sessionlocks/rpc"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
	"github.com/copilot-ide/sessionlocks/watch"
)

type rwc struct{}

func (rwc) Read(b []byte) (int, error)  { return os.Stdin.Read(b) }
func (rwc) Write(b []byte) (int, error) { return os.Stdout.Write(b) }
func (rwc) Close() error                { return os.Stdin.Close() }

func main() {
	flag.CommandLine.Parse(os.Args[2:])
	dir := flag.String("state-dir", "", "")
	flag.String("log-level", "", "")
	flag.CommandLine.Parse(os.Args[2:])
	e := sessionlocks.New(sessionlocks.Options{StateDir: *dir})
	opts := rpc.Options{Engine: e, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if w, err := watch.New(e, watch.Options{}); err == nil {
		opts.Watcher = w
	}
	rpc.NewServer(opts).Serve(context.Background(), rwc{})
}
