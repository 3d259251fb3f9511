// Package fakecli behaves like the Copilot CLI 1.0.102 where session locks are
// concerned, so that tests and the REPL's demo exercise real processes, real
// files and real flocks. It takes the session's operation lock, writes
// inuse.<pid>.lock, about a millisecond later creates and flocks
// inuse.<pid>.hold, releases the operation lock, and holds the .hold until it
// exits. Built under the name "copilot" its argv looks like the CLI's.
package fakecli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the fake CLI's flags.
type options struct {
	opener
	exitOnEOF, ignoreTerm bool
	execOn, execOnTerm    string
	nameThread            bool
	openDB                bool
	openExtra, comm       string
	loop                  int
	loopHold              time.Duration
	namePID               int
}

// Run is the fake CLI's main: it returns the exit code.
//
// It prints "ready <pid>" on stdout once the session is open, so that a
// parent knows when the locks are in place, then waits: forever, or until
// stdin closes with --exit-on-eof, or until SIGTERM/SIGINT (removing its
// files either way, as a clean exit does).
func Run(args []string, stdout, stderr io.Writer) int {
	o, code := parse(args, stdout, stderr)
	if o == nil {
		return code
	}
	if err := o.setUp(); err != nil {
		fmt.Fprintln(stderr, "copilot(fake):", err)
		return 1
	}
	db := ""
	if o.openDB {
		db = filepath.Join(o.stateDir, o.session, "session.db")
	}
	if o.loop > 0 {
		return o.openLoop(stdout, stderr)
	}
	s, err := o.open()
	if err != nil {
		fmt.Fprintln(stderr, "copilot(fake):", err)
		return 1
	}
	for _, extra := range []string{db, o.openExtra} {
		if extra == "" {
			continue
		}
		f, err := os.OpenFile(extra, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			fmt.Fprintln(stderr, "copilot(fake):", err)
			return 1
		}
		defer f.Close()
	}
	// Signals are caught before "ready": a parent may signal at once.
	// With --exit-on-eof they keep their default action (SIGTERM ends it).
	sig := make(chan os.Signal, 1)
	if !o.exitOnEOF {
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt, execSignal)
	}
	fmt.Fprintf(stdout, "ready %d\n", os.Getpid())
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	if o.exitOnEOF {
		io.Copy(io.Discard, os.Stdin)
	} else {
		o.wait(s, sig, stderr)
	}
	s.close()
	return 0
}

func parse(args []string, stdout, stderr io.Writer) (*options, int) {
	var o options
	fs := flag.NewFlagSet("copilot", flag.ContinueOnError)
	fs.StringVar(&o.stateDir, "state-dir", "", "session-state directory")
	fs.StringVar(&o.session, "session", "", "session id to open")
	fs.BoolVar(&o.exitOnEOF, "exit-on-eof", false, "remove the locks and exit when stdin closes")
	// The demo uses the flags above; only tests use those below, each to
	// play a CLI behaviour the engine must judge right.
	fs.BoolVar(&o.old, "old", false, "write only the .lock, as CLIs before the .hold did")
	fs.DurationVar(&o.holdDelay, "hold-delay", time.Millisecond, "pause between writing the .lock and flocking the .hold")
	noOpLock := fs.Bool("no-op-lock", false, "skip the session operation lock")
	fs.BoolVar(&o.ignoreTerm, "ignore-term", false, "survive SIGTERM (exit on SIGINT only), as a hung CLI would")
	fs.StringVar(&o.execOn, "exec-on-usr1", "", "on SIGUSR1, exec this command line (space-separated), keeping the .hold open and locked")
	fs.StringVar(&o.execOnTerm, "exec-on-term", "", "on SIGTERM, exec this command line (space-separated): the .hold closes, and another program runs on under the pid")
	fs.IntVar(&o.namePID, "name-pid", 0, "name the lock files (and write into the .lock) this pid instead of the process's own")
	fs.BoolVar(&o.nameThread, "name-thread", false, "name the lock files after one of this process's other threads (Linux)")
	fs.BoolVar(&o.openDB, "open-db", false, "keep the session's session.db open, as CLIs 1.0.45 to 1.0.65 do")
	fs.StringVar(&o.openExtra, "open", "", "also keep this file open (a file on another mount, say)")
	fs.StringVar(&o.comm, "comm", "", "name the main thread so (Linux: /proc/self/comm), as the native CLI's is MainThread")
	fs.IntVar(&o.loop, "loop", 0, "open and close the session this many times, then exit; report lost locks")
	fs.DurationVar(&o.loopHold, "loop-hold", 2*time.Millisecond, "how long each loop iteration keeps the session open")
	usage := func(w io.Writer) {
		fmt.Fprintln(w, "usage: sessionlocks _fakecli --state-dir DIR --session ID [flags]\n\nBehaves like a Copilot CLI holding the session (for the demo and tests).\n\nflags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	fs.SetOutput(io.Discard)
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		usage(stdout) // asked for: to stdout, exit 0, as every command's help
		return nil, 0
	case err != nil:
		fmt.Fprintln(stderr, err)
		usage(stderr)
		return nil, 2
	case o.stateDir == "" || o.session == "":
		fmt.Fprintln(stderr, "copilot(fake): --state-dir and --session are required")
		return nil, 2
	}
	o.opLock, o.pid = !*noOpLock, os.Getpid()
	return &o, 0
}

// setUp names the lock files and the main thread as the flags say.
func (o *options) setUp() error {
	if o.namePID > 0 {
		o.pid = o.namePID
	}
	if o.nameThread {
		tid, err := otherThread()
		if err != nil {
			return fmt.Errorf("--name-thread: %w", err)
		}
		o.pid = tid
	}
	if o.comm != "" {
		if err := os.WriteFile("/proc/self/comm", []byte(o.comm), 0); err != nil {
			return fmt.Errorf("--comm: %w", err)
		}
	}
	return nil
}

// openLoop opens and closes the session --loop times and says how often
// its locks were lost while it held them.
func (o *options) openLoop(stdout, stderr io.Writer) int {
	lost := 0
	for range o.loop {
		s, err := o.open()
		if err != nil {
			fmt.Fprintln(stderr, "copilot(fake):", err)
			return 1
		}
		time.Sleep(o.loopHold)
		if !s.intact() {
			lost++
		}
		s.close()
	}
	fmt.Fprintf(stdout, "done %d lost %d\n", o.loop, lost)
	return 0
}

// wait waits for SIGTERM or SIGINT, to exit as a polite CLI does (its
// caller removes its files; SIGKILL leaves them behind, as with the real
// one), exec'ing instead where the flags say.
func (o *options) wait(s *openSession, sig chan os.Signal, stderr io.Writer) {
	for {
		switch <-sig {
		case syscall.SIGTERM:
			if o.execOnTerm != "" {
				if err := execPlain(strings.Fields(o.execOnTerm)); err != nil {
					fmt.Fprintln(stderr, "copilot(fake): exec:", err)
				}
				continue
			}
			if o.ignoreTerm {
				fmt.Fprintln(stderr, "copilot(fake): SIGTERM ignored")
				continue
			}
		case execSignal:
			if o.execOn != "" {
				if err := execKeepingHold(s.hold, strings.Fields(o.execOn)); err != nil {
					fmt.Fprintln(stderr, "copilot(fake): exec:", err)
				}
			}
			continue
		}
		return
	}
}

type opener struct {
	stateDir, session string
	old               bool
	holdDelay         time.Duration
	opLock            bool
	pid               int // the pid the files are named with
}

type openSession struct {
	lockPath, holdPath string
	hold               *os.File
	lockInfo           os.FileInfo
}

func (o opener) open() (*openSession, error) {
	dir := filepath.Join(o.stateDir, o.session)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if o.opLock {
		release, err := lockOp(filepath.Join(o.stateDir, ".session-operation-locks", o.session+".lock"))
		if err != nil {
			return nil, err
		}
		defer release()
	}
	pid := strconv.Itoa(o.pid)
	s := &openSession{
		lockPath: filepath.Join(dir, "inuse."+pid+".lock"),
		holdPath: filepath.Join(dir, "inuse."+pid+".hold"),
	}
	if err := os.WriteFile(s.lockPath, []byte(pid+"\n"), 0o644); err != nil {
		return nil, err
	}
	s.lockInfo, _ = os.Stat(s.lockPath)
	if o.old {
		return s, nil
	}
	time.Sleep(o.holdDelay)
	f, err := openHold(s.holdPath)
	if err != nil {
		return nil, err
	}
	if err := flockExclusive(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("flock %s: %w", s.holdPath, err)
	}
	s.hold = f
	return s, nil
}

// intact reports whether the .lock (and .hold) this session wrote are still there.
func (s *openSession) intact() bool {
	fi, err := os.Stat(s.lockPath)
	if err != nil || !os.SameFile(fi, s.lockInfo) {
		return false
	}
	if s.hold != nil {
		hi, err := os.Stat(s.holdPath)
		if err != nil {
			return false
		}
		mine, err := s.hold.Stat()
		if err != nil || !os.SameFile(hi, mine) {
			return false
		}
	}
	return true
}

func (s *openSession) close() {
	os.Remove(s.lockPath)
	if s.hold != nil {
		os.Remove(s.holdPath)
		s.hold.Close()
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

// otherThread is the id of one of this process's threads other than the
// main one.
func otherThread() (int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil && tid != os.Getpid() {
			return tid, nil
		}
	}
	return 0, fmt.Errorf("no thread besides the main one")
}
