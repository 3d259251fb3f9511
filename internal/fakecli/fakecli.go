// Package fakecli behaves like the Copilot CLI 1.0.102 where session locks are
// concerned, so that the REPL's demo and the tests exercise real processes,
// files and flocks. Run is `sessionlocks _fakecli`, the demo's CLI; the
// behaviours only tests play are internal/testbin/fakecopilot's.
package fakecli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Options say how a session is opened.
type Options struct {
	StateDir, Session string
	PID               int           // the pid the files are named with; 0: this process's
	Old               bool          // write only the .lock, as CLIs before the .hold did
	HoldDelay         time.Duration // pause between writing the .lock and flocking the .hold
	NoOpLock          bool          // skip the session operation lock
}

// Run is the fake CLI's main. It prints "ready <pid>" once the session is
// open, then waits for stdin to close (--exit-on-eof) or SIGTERM/SIGINT, and
// removes its files as a clean exit does.
func Run(args []string, stdout, stderr io.Writer) int {
	var o Options
	fs := Flags(&o)
	exitOnEOF := fs.Bool("exit-on-eof", false, "remove the locks and exit when stdin closes")
	if code, done := Parse(fs, &o, args, stdout, stderr); done {
		return code
	}
	s, err := Open(o)
	if err != nil {
		fmt.Fprintln(stderr, "copilot(fake):", err)
		return 1
	}
	defer s.Close()
	// Signals are caught before "ready": a parent may signal at once.
	// With --exit-on-eof they keep their default action (SIGTERM ends it).
	sig := make(chan os.Signal, 1)
	if !*exitOnEOF {
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	}
	Ready(stdout)
	if *exitOnEOF {
		io.Copy(io.Discard, os.Stdin)
	} else {
		<-sig
	}
	return 0
}

// Flags is the fake CLI's flag set, with the flags every fake CLI takes.
func Flags(o *Options) *flag.FlagSet {
	fs := flag.NewFlagSet("copilot", flag.ContinueOnError)
	fs.StringVar(&o.StateDir, "state-dir", "", "session-state directory")
	fs.StringVar(&o.Session, "session", "", "session id to open")
	o.HoldDelay = time.Millisecond
	return fs
}

// Parse parses args into fs and says whether the command is done, with
// what exit code: help asked for, a mistake, or a flag missing.
func Parse(fs *flag.FlagSet, o *Options, args []string, stdout, stderr io.Writer) (code int, done bool) {
	usage := func(w io.Writer) {
		fmt.Fprintln(w, "usage: sessionlocks _fakecli --state-dir DIR --session ID [flags]\n\nBehaves like a Copilot CLI holding the session (for the demo and tests).\n\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	fs.SetOutput(io.Discard)
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		usage(stdout) // asked for: to stdout, exit 0, as every command's help
		return 0, true
	case err != nil:
		fmt.Fprintln(stderr, err)
		usage(stderr)
		return 2, true
	case o.StateDir == "" || o.Session == "":
		fmt.Fprintln(stderr, "copilot(fake): --state-dir and --session are required")
		return 2, true
	}
	return 0, false
}

// Ready tells the parent that the session is open.
func Ready(stdout io.Writer) {
	fmt.Fprintf(stdout, "ready %d\n", os.Getpid())
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
}

// Session is a session the fake CLI holds open.
type Session struct {
	LockPath, HoldPath string
	Hold               *os.File // nil for an old-format lock
	LockInfo           os.FileInfo
}

// Open opens a session as the CLI does: it takes the session's operation
// lock, writes inuse.<pid>.lock, about a millisecond later creates and flocks
// inuse.<pid>.hold (held until Close), and releases the operation lock.
func Open(o Options) (*Session, error) {
	dir := filepath.Join(o.StateDir, o.Session)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if !o.NoOpLock {
		release, err := lockOp(filepath.Join(o.StateDir, ".session-operation-locks", o.Session+".lock"))
		if err != nil {
			return nil, err
		}
		defer release()
	}
	pid := strconv.Itoa(cmp.Or(o.PID, os.Getpid()))
	s := &Session{
		LockPath: filepath.Join(dir, "inuse."+pid+".lock"),
		HoldPath: filepath.Join(dir, "inuse."+pid+".hold"),
	}
	if err := os.WriteFile(s.LockPath, []byte(pid+"\n"), 0o644); err != nil {
		return nil, err
	}
	s.LockInfo, _ = os.Stat(s.LockPath)
	if o.Old {
		return s, nil
	}
	time.Sleep(o.HoldDelay)
	f, err := openHold(s.HoldPath)
	if err != nil {
		return nil, err
	}
	if err := flockExclusive(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("flock %s: %w", s.HoldPath, err)
	}
	s.Hold = f
	return s, nil
}

// Close removes the session's files, as a CLI that exits cleanly does.
func (s *Session) Close() {
	os.Remove(s.LockPath)
	if s.Hold != nil {
		os.Remove(s.HoldPath)
		s.Hold.Close()
	}
}

// lockOp takes the CLI's per-session operation lock, retrying every ~27 ms as
// the real CLI does while someone else holds it.
func lockOp(path string) (release func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := flockExclusive(f)
		if err == nil {
			return func() { unlock(f); f.Close() }, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("operation lock %s still busy after 30s", path)
		}
		time.Sleep(27 * time.Millisecond)
	}
}
