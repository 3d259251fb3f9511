package main

// Benchmarks of serve through the real binary: start-up, first listing, idle memory, exit.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/rpc"
)

// BenchmarkSpawnToFirstAnswer is the IDE's cold path (goal: <= 20 ms): start
// `sessionlocks serve` over pipes, send status, wait for the answer. The
// child is then closed and reaped outside the timer.
func BenchmarkSpawnToFirstAnswer(b *testing.B) {
	bin := serveBinary(b)
	state := filepath.Join(b.TempDir(), "session-state")
	for i := 0; i < 1000; i++ {
		e2eSession(b, state, sessionName(i))
	}
	for _, watchArg := range []string{"--no-watch", "--watch=auto"} {
		b.Run(watchArg, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(bin, "serve", "--state-dir", state, watchArg)
				c, err := rpc.DialCommand(cmd, rpc.ClientOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Call(context.Background(), rpc.MethodStatus, nil, nil); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				c.Close()
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkSpawnToFirstList is the same with listSessions over 1,000
// sessions as the first call, the answer the IDE actually waits for.
func BenchmarkSpawnToFirstList(b *testing.B) {
	bin := serveBinary(b)
	state := filepath.Join(b.TempDir(), "session-state")
	for i := 0; i < 1000; i++ {
		e2eSession(b, state, sessionName(i))
	}
	for b.Loop() {
		cmd := exec.Command(bin, "serve", "--state-dir", state, "--no-watch")
		c, err := rpc.DialCommand(cmd, rpc.ClientOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var r rpc.ListSessionsResult
		if err := c.Call(context.Background(), rpc.MethodListSessions, nil, &r); err != nil || r.Total != 1000 {
			b.Fatal(err, r.Total)
		}
		b.StopTimer()
		c.Close()
		cmd.Wait()
		b.StartTimer()
	}
}

func sessionName(i int) string {
	const hex = "0123456789abcdef"
	b := []byte("00000000-0000-4000-8000-000000000000")
	for j := 7; j >= 0 && i > 0; j-- {
		b[j] = hex[i%16]
		i /= 16
	}
	return string(b)
}

// BenchmarkIdleRSS1000 reports the server's resident memory (goal: <= 24
// MiB) after it has listed 1,000 sessions and is idle, watching them.
// Linux only: it reads /proc/<pid>/status.
func BenchmarkIdleRSS1000(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("no /proc")
	}
	bin := serveBinary(b)
	state := filepath.Join(b.TempDir(), "session-state")
	for i := 0; i < 1000; i++ {
		e2eSession(b, state, sessionName(i))
	}
	var rss float64
	for b.Loop() {
		cmd := exec.Command(bin, "serve", "--state-dir", state)
		c, err := rpc.DialCommand(cmd, rpc.ClientOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Call(context.Background(), rpc.MethodListSessions, nil, nil); err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Second) // idle: let the watcher settle and the GC run
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				rss = float64(kb) / 1024
			}
		}
		c.Close()
		cmd.Wait()
	}
	b.ReportMetric(rss, "rss-MiB")
}

// BenchmarkExit times how long serve takes to exit (goal: < 1 s) once
// stdin closes, and once it gets SIGTERM, with the watcher running.
func BenchmarkExit(b *testing.B) {
	bin := serveBinary(b)
	state := filepath.Join(b.TempDir(), "session-state")
	for i := 0; i < 100; i++ {
		e2eSession(b, state, sessionName(i))
	}
	for _, how := range []string{"stdin-EOF", "SIGTERM"} {
		b.Run(how, func(b *testing.B) {
			if how == "SIGTERM" && runtime.GOOS == "windows" {
				b.Skip("no SIGTERM")
			}
			for b.Loop() {
				b.StopTimer()
				cmd := exec.Command(bin, "serve", "--state-dir", state)
				c, err := rpc.DialCommand(cmd, rpc.ClientOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Call(context.Background(), rpc.MethodListSessions, nil, nil); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if how == "SIGTERM" {
					cmd.Process.Signal(syscall.SIGTERM)
				} else {
					c.Close()
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				c.Close()
				b.StartTimer()
			}
		})
	}
}
