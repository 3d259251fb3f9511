// Package fakecli behaves like the Copilot CLI 1.0.102 where session locks are
// concerned, so that tests and the REPL's demo exercise real processes, real
// files and real flocks. It takes the session's operation lock, writes
// inuse.<pid>.lock, about a millisecond later creates and flocks
// inuse.<pid>.hold, releases the operation lock, and holds the .hold until it
// exits. Built under the name "copilot" its argv looks like the CLI's.
package fakecli

import (
	"bufio"
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

// Run is the fake CLI's main: it returns the exit code.
//
// It prints "ready <pid>" on stdout once the session is open, so that a
// parent knows when the locks are in place, then waits: forever, or until
// stdin closes with --exit-on-eof, or until SIGTERM/SIGINT (removing its
// files either way, as a clean exit does).
func Run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("copilot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stateDir := fs.String("state-dir", "", "session-state directory")
	session := fs.String("session", "", "session id to open")
	oldFormat := fs.Bool("old", false, "write only the .lock, as CLIs before the .hold did")
	holdDelay := fs.Duration("hold-delay", time.Millisecond, "pause between writing the .lock and flocking the .hold")
	noOpLock := fs.Bool("no-op-lock", false, "skip the session operation lock")
	exitOnEOF := fs.Bool("exit-on-eof", false, "remove the locks and exit when stdin closes")
	ignoreTerm := fs.Bool("ignore-term", false, "survive SIGTERM (exit on SIGINT only), as a hung CLI would")
	execOn := fs.String("exec-on-usr1", "", "on SIGUSR1, exec this command line (space-separated), keeping the .hold open and locked")
	execOnTerm := fs.String("exec-on-term", "", "on SIGTERM, exec this command line (space-separated): the .hold closes, and another program runs on under the pid")
	namePID := fs.Int("name-pid", 0, "name the lock files (and write into the .lock) this pid instead of the process's own")
	nameThread := fs.Bool("name-thread", false, "name the lock files after one of this process's other threads (Linux)")
	openDB := fs.Bool("open-db", false, "keep the session's session.db open, as CLIs 1.0.45 to 1.0.65 do")
	openExtra := fs.String("open", "", "also keep this file open (a file on another mount, say)")
	comm := fs.String("comm", "", "name the main thread so (Linux: /proc/self/comm), as the native CLI's is MainThread")
	loop := fs.Int("loop", 0, "open and close the session this many times, then exit; report lost locks")
	loopHold := fs.Duration("loop-hold", 2*time.Millisecond, "how long each loop iteration keeps the session open")
	usage := func() {
		fmt.Fprintln(fs.Output(), "usage: sessionlocks _fakecli --state-dir DIR --session ID [flags]\n\nBehaves like a Copilot CLI holding the session (for the demo and tests).\n\nflags:")
		fs.PrintDefaults()
	}
	fs.Usage = func() {} // shown below, where it belongs
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			// Asked for: to stdout, exit 0, as every command's help.
			fs.SetOutput(stdout)
			usage()
			return 0
		}
		usage()
		return 2
	}
	if *stateDir == "" || *session == "" {
		fmt.Fprintln(stderr, "copilot(fake): --state-dir and --session are required")
		return 2
	}
	o := opener{stateDir: *stateDir, session: *session, old: *oldFormat, holdDelay: *holdDelay, opLock: !*noOpLock, pid: os.Getpid()}
	if *namePID > 0 {
		o.pid = *namePID
	}
	if *nameThread {
		tid, err := otherThread()
		if err != nil {
			fmt.Fprintln(stderr, "copilot(fake): --name-thread:", err)
			return 1
		}
		o.pid = tid
	}
	if *comm != "" {
		if err := os.WriteFile("/proc/self/comm", []byte(*comm), 0); err != nil {
			fmt.Fprintln(stderr, "copilot(fake): --comm:", err)
			return 1
		}
	}
	if *loop > 0 {
		lost := 0
		for i := 0; i < *loop; i++ {
			s, err := o.open()
			if err != nil {
				fmt.Fprintln(stderr, "copilot(fake):", err)
				return 1
			}
			time.Sleep(*loopHold)
			if !s.intact() {
				lost++
			}
			s.close()
		}
		fmt.Fprintf(stdout, "done %d lost %d\n", *loop, lost)
		return 0
	}
	s, err := o.open()
	if err != nil {
		fmt.Fprintln(stderr, "copilot(fake):", err)
		return 1
	}
	if *openDB {
		db, err := os.OpenFile(filepath.Join(o.stateDir, o.session, "session.db"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			fmt.Fprintln(stderr, "copilot(fake):", err)
			return 1
		}
		defer db.Close()
	}
	if *openExtra != "" {
		f, err := os.OpenFile(*openExtra, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			fmt.Fprintln(stderr, "copilot(fake):", err)
			return 1
		}
		defer f.Close()
	}
	// Signals are caught before "ready": a parent may signal at once.
	// With --exit-on-eof they keep their default action (SIGTERM ends it).
	sig := make(chan os.Signal, 1)
	if !*exitOnEOF {
		signal.Notify(sig, syscall.SIGTERM, os.Interrupt, execSignal)
	}
	fmt.Fprintf(stdout, "ready %d\n", os.Getpid())
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	if *exitOnEOF {
		io.Copy(io.Discard, bufio.NewReader(os.Stdin))
		s.close()
		return 0
	}
	// Wait for SIGTERM or SIGINT and exit as a polite CLI does, removing its
	// files; SIGKILL leaves them behind, as with the real one.
	for {
		switch <-sig {
		case syscall.SIGTERM:
			if *execOnTerm != "" {
				if err := execPlain(strings.Fields(*execOnTerm)); err != nil {
					fmt.Fprintln(stderr, "copilot(fake): exec:", err)
				}
				continue
			}
			if *ignoreTerm {
				fmt.Fprintln(stderr, "copilot(fake): SIGTERM ignored")
				continue
			}
		case execSignal:
			if *execOn == "" {
				continue
			}
			if err := execKeepingHold(s.hold, strings.Fields(*execOn)); err != nil {
				fmt.Fprintln(stderr, "copilot(fake): exec:", err)
			}
			continue
		}
		s.close()
		return 0
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
