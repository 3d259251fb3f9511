package main

// `sessionlocks serve`: the JSON-RPC server on stdio; and the engine and
// log flags that serve, call and repl share.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/dropwrite"
	"github.com/copilot-ide/sessionlocks/internal/version"
	"github.com/copilot-ide/sessionlocks/rpc"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
	"github.com/copilot-ide/sessionlocks/watch"
)

const stateDirHelp = "session-state directory (default $COPILOT_HOME/session-state, else ~/.copilot/session-state)"

func runServe(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sessionlocks serve", `usage: sessionlocks serve [flags]

Speaks JSON-RPC 2.0 on stdin/stdout, Content-Length framed or newline-delimited
(detected from the first byte). Exits when stdin closes. Logs go to stderr.`)
	var ef engineFlags
	ef.register(fs)
	noWatch := fs.Bool("no-watch", false, "do not watch for changes (no sessionsChanged notifications)")
	pollInterval := fs.Duration("poll-interval", watch.DefaultPollInterval, "poll mode: how often session directories are checked for changes")
	watchMode := fs.String("watch", string(watch.ModeAuto), "how to watch: auto, notify (file events everywhere) or poll (events on locked sessions, mtime polling elsewhere)")
	var lf logFlags
	lf.register(fs, "info")
	trace := fs.Bool("trace", false, "log every message body read and written (at info level, so it shows with the default --log-level)")
	maxMsg := fs.Int64("max-message-size", rpc.DefaultMaxMessageSize, "largest accepted message in bytes; larger ones are discarded and answered with an error")
	if code, done := parseNoArgs(fs, args, stdout, stderr); done {
		return code
	}
	mode, err := watch.ParseMode(*watchMode)
	if err != nil {
		say(stderr, "sessionlocks serve: --watch: %v", err)
		return 2
	}
	log, sink, err := lf.open(stderr)
	if err != nil {
		say(stderr, "sessionlocks serve: %v", err)
		return 2
	}
	defer sink.Close(logFlushWait)
	slog.SetDefault(log)

	engine, err := ef.engine(log)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	// Take stdout before anything can write to it.
	stdio, err := rpc.Stdio()
	if err != nil {
		log.Error("taking over stdout", "error", err)
		return 1
	}
	opts := rpc.Options{Engine: engine, Logger: log, MaxMessageSize: *maxMsg, LogDropped: sink.Dropped}
	if *trace {
		opts.Trace = func(in bool, body []byte) {
			log.Info("trace", "dir", map[bool]string{true: "recv", false: "send"}[in], "body", string(body))
		}
	}
	if !*noWatch {
		// A watcher that cannot start costs notifications, not answers.
		w, err := watch.New(engine, watch.Options{Mode: mode, PollInterval: *pollInterval, Logger: log})
		if err != nil {
			log.Warn("not watching for changes; sessionsChanged will not be sent", "error", err)
		} else {
			opts.Watcher = w
		}
	}

	// An IDE that closes our stderr must not kill us with SIGPIPE on the
	// next log line (Go's default for fds 1 and 2); the write fails instead.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Info("serving", "version", version.Version, "pid", os.Getpid(), "stateDir", engine.Status().StateDir, "watch", opts.Watcher != nil)
	err = rpc.NewServer(opts).Serve(ctx, stdio)
	switch {
	case err == nil:
		log.Info("stdin closed; exiting")
	case errors.Is(err, context.Canceled):
		log.Info("signalled; exiting")
	default:
		log.Error("serve failed", "error", err)
		return 1
	}
	return 0
}

// engineFlags are the flags that configure the engine; serve and call share them.
type engineFlags struct {
	stateDir string
	settle   time.Duration
	cacheTTL time.Duration
}

func (f *engineFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.stateDir, "state-dir", "", stateDirHelp)
	fs.DurationVar(&f.settle, "settle", sessionlocks.DefaultSettle, "a live process's lock younger than this counts as starting")
	fs.DurationVar(&f.cacheTTL, "cache-ttl", sessionlocks.DefaultCacheTTL, "how long a probe result is reused (0 or negative: no cache)")
}

func (f *engineFlags) engine(log *slog.Logger) (*sessionlocks.Engine, error) {
	dir, err := f.stateDir, error(nil)
	if dir == "" {
		if dir, err = sessionlocks.DefaultStateDir(); err != nil {
			return nil, fmt.Errorf("finding the default state directory: %w (use --state-dir)", err)
		}
	}
	ttl := f.cacheTTL
	if ttl == 0 {
		ttl = -1 // the flag says 0 means no cache; the engine's 0 means its default
	}
	return sessionlocks.New(sessionlocks.Options{StateDir: dir, Settle: f.settle, CacheTTL: ttl, Logger: log}), nil
}

// logFlags are the logging flags; serve, call and repl (which passes them
// to the serve it starts) share them.
type logFlags struct{ level, file string }

func (f *logFlags) register(fs *flag.FlagSet, level string) {
	fs.StringVar(&f.level, "log-level", level, "debug, info, warn or error (info logs every verdict given, lock removed and process signalled)")
	fs.StringVar(&f.file, "log-file", "", "append logs to this file instead of stderr")
}

// args are the flags again, for a serve started with them.
func (f *logFlags) args() []string {
	out := []string{"--log-level", f.level}
	if f.file != "" {
		out = append(out, "--log-file", f.file)
	}
	return out
}

func (f *logFlags) slogLevel() (slog.Level, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToLower(f.level))); err != nil {
		return 0, fmt.Errorf("--log-level must be debug, info, warn or error, not %q", f.level)
	}
	return lv, nil
}

// logQueue bounds the log lines kept for a log nobody reads, and
// logFlushWait how long they may take to be written at exit.
const (
	logQueue     = 1 << 20
	logFlushWait = 200 * time.Millisecond
)

// open makes the logger: text to stderr or the --log-file, through a
// dropwrite.Writer, so that a log nobody reads (stderr piped and never read,
// a FIFO, a hung network file system, a full disk) costs lines, never answers.
func (f *logFlags) open(stderr io.Writer) (*slog.Logger, *dropwrite.Writer, error) {
	lv, err := f.slogLevel()
	if err != nil {
		return nil, nil, err
	}
	w := stderr
	if f.file != "" {
		// Without O_NONBLOCK, opening a FIFO that nobody reads blocks
		// until someone does: here it fails at once (ENXIO). It changes
		// nothing for a regular file, and Windows ignores it.
		file, err := os.OpenFile(f.file, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NONBLOCK, 0o644)
		if errors.Is(err, syscall.ENXIO) {
			return nil, nil, fmt.Errorf("--log-file %s: a FIFO that nobody reads; start its reader first", f.file)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		w = file // closed by the process's exit: the writer may still be using it
	}
	sink := dropwrite.New(w, logQueue)
	return slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: lv})), sink, nil
}
