//go:build unix

package main

// serve --log-file never blocks (issue 23 item 6): a FIFO nobody reads is
// refused at once, with exit code 2, before serving; a log whose reader
// stops reading (a FIFO, a terminal) costs log lines, never an answer; a
// regular file and /dev/null keep working.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestServeLogFileFIFONobodyReads(t *testing.T) {
	bin := serveBinary(t)
	fifo := filepath.Join(t.TempDir(), "log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"serve"}, {"call", "status"}} {
		cmd := exec.Command(bin, append(args, "--state-dir", t.TempDir(), "--log-file", fifo)...)
		stdin, _ := cmd.StdinPipe() // open, never written: it must not wait for input either
		defer stdin.Close()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s --log-file FIFO (no reader) did not exit within 10s: it blocks opening its log", args[0])
		}
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(stderr.String(), "a FIFO that nobody reads") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and a message that says why", args[0], code, stderr.String())
		}
	}
}

// terminalLog, where it is set, gives a terminal nobody reads.
var terminalLog func(t *testing.T) string

func TestServeLogFileReaderStops(t *testing.T) {
	bin := serveBinary(t)
	logs := map[string]func(t *testing.T) string{
		// A FIFO whose reader opened it and never reads: it fills at 64 KiB.
		"fifo": func(t *testing.T) string {
			fifo := filepath.Join(t.TempDir(), "log")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			return fifo
		},
		"regular file": func(t *testing.T) string { return filepath.Join(t.TempDir(), "serve.log") },
		"/dev/null":    func(*testing.T) string { return os.DevNull },
	}
	if terminalLog != nil {
		logs["terminal"] = terminalLog
	}
	for name, open := range logs {
		t.Run(name, func(t *testing.T) {
			state := t.TempDir()
			e2eSession(t, state, "s")
			path := open(t)
			s := startRawServe(t, bin, nil, "--state-dir", state, "--log-level", "debug", "--no-watch", "--log-file", path)
			s.flood(t, 3000) // each is logged at debug: far more than a pipe holds
			s.in.Close()
			took := s.waitExit(t, "after stdin closed, its log not read")
			t.Logf("answered 3000 requests; exited %v after stdin closed", took)
			if name == "regular file" {
				if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(`msg=serving`)) || !bytes.Contains(b, []byte(`msg="stdin closed; exiting"`)) {
					t.Errorf("the log file lacks the start and the end:\n%.500s", b)
				}
			}
		})
	}
}
