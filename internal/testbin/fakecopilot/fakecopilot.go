// Package fakecopilot is the fake Copilot CLI the tests run (built by
// testbin.FakeCLI from internal/fakecli/copilot): internal/fakecli's, plus
// flags that only tests use, each to play a CLI behaviour the engine must
// judge right.
package fakecopilot

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/fakecli"
)

// options are the fake CLI's flags.
type options struct {
	fakecli.Options
	exitOnEOF, ignoreTerm bool
	execOn, execOnTerm    string
	nameThread            bool
	openDB                bool
	openExtra, comm       string
	loop                  int
	loopHold              time.Duration
}

// Run is the fake CLI's main, as fakecli.Run's: it returns the exit code.
func Run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := fakecli.Flags(&o.Options)
	fs.BoolVar(&o.exitOnEOF, "exit-on-eof", false, "remove the locks and exit when stdin closes")
	fs.BoolVar(&o.Old, "old", false, "write only the .lock, as CLIs before the .hold did")
	fs.DurationVar(&o.HoldDelay, "hold-delay", time.Millisecond, "pause between writing the .lock and flocking the .hold")
	fs.BoolVar(&o.NoOpLock, "no-op-lock", false, "skip the session operation lock")
	fs.BoolVar(&o.ignoreTerm, "ignore-term", false, "survive SIGTERM (exit on SIGINT only), as a hung CLI would")
	fs.StringVar(&o.execOn, "exec-on-usr1", "", "on SIGUSR1, exec this command line (space-separated), keeping the .hold open and locked")
	fs.StringVar(&o.execOnTerm, "exec-on-term", "", "on SIGTERM, exec this command line (space-separated): the .hold closes, and another program runs on under the pid")
	fs.IntVar(&o.PID, "name-pid", 0, "name the lock files (and write into the .lock) this pid instead of the process's own")
	fs.BoolVar(&o.nameThread, "name-thread", false, "name the lock files after one of this process's other threads (Linux)")
	fs.BoolVar(&o.openDB, "open-db", false, "keep the session's session.db open, as CLIs 1.0.45 to 1.0.65 do")
	fs.StringVar(&o.openExtra, "open", "", "also keep this file open (a file on another mount, say)")
	fs.StringVar(&o.comm, "comm", "", "name the main thread so (Linux: /proc/self/comm), as the native CLI's is MainThread")
	fs.IntVar(&o.loop, "loop", 0, "open and close the session this many times, then exit; report lost locks")
	fs.DurationVar(&o.loopHold, "loop-hold", 2*time.Millisecond, "how long each loop iteration keeps the session open")
	if code, done := fakecli.Parse(fs, &o.Options, args, stdout, stderr); done {
		return code
	}
	if err := o.setUp(); err != nil {
		fmt.Fprintln(stderr, "copilot(fake):", err)
		return 1
	}
	if o.loop > 0 {
		return o.openLoop(stdout, stderr)
	}
	s, err := fakecli.Open(o.Options)
	if err != nil {
		fmt.Fprintln(stderr, "copilot(fake):", err)
		return 1
	}
	db := ""
	if o.openDB {
		db = filepath.Join(o.StateDir, o.Session, "session.db")
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
	fakecli.Ready(stdout)
	if o.exitOnEOF {
		io.Copy(io.Discard, os.Stdin)
	} else {
		o.wait(s, sig, stderr)
	}
	s.Close()
	return 0
}

// setUp names the lock files and the main thread as the flags say.
func (o *options) setUp() error {
	if o.nameThread {
		tid, err := otherThread()
		if err != nil {
			return fmt.Errorf("--name-thread: %w", err)
		}
		o.PID = tid
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
		s, err := fakecli.Open(o.Options)
		if err != nil {
			fmt.Fprintln(stderr, "copilot(fake):", err)
			return 1
		}
		time.Sleep(o.loopHold)
		if !intact(s) {
			lost++
		}
		s.Close()
	}
	fmt.Fprintf(stdout, "done %d lost %d\n", o.loop, lost)
	return 0
}

// wait waits for SIGTERM or SIGINT, to exit as a polite CLI does (its
// caller removes its files; SIGKILL leaves them behind, as with the real
// one), exec'ing instead where the flags say.
func (o *options) wait(s *fakecli.Session, sig chan os.Signal, stderr io.Writer) {
	for {
		switch <-sig {
		case syscall.SIGTERM:
			if o.execOnTerm != "" {
				// Descriptors opened close-on-exec (the .hold among them)
				// close, as a CLI exec'ing another program would.
				if err := execKeepingHold(nil, strings.Fields(o.execOnTerm)); err != nil {
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
				if err := execKeepingHold(s.Hold, strings.Fields(o.execOn)); err != nil {
					fmt.Fprintln(stderr, "copilot(fake): exec:", err)
				}
			}
			continue
		}
		return
	}
}

// intact reports whether the .lock (and .hold) s wrote are still there.
func intact(s *fakecli.Session) bool {
	fi, err := os.Stat(s.LockPath)
	if err != nil || !os.SameFile(fi, s.LockInfo) {
		return false
	}
	if s.Hold != nil {
		hi, err := os.Stat(s.HoldPath)
		if err != nil {
			return false
		}
		mine, err := s.Hold.Stat()
		if err != nil || !os.SameFile(hi, mine) {
			return false
		}
	}
	return true
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
