//go:build linux

package main

// Benchmarks of the server against hostile peers and hostile state dirs,
// through the real binary: what they cost in time and in the server's
// resident memory at its peak (VmHWM: Linux only, hence the build tag).

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/rpc"
)

func needProcStatus(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc/<pid>/status for the server's memory high-water mark")
	}
}

// BenchmarkUnreadListings is a client that pipelines 10,000 listSessions
// over 3,000 sessions and never reads an answer (goal: the server's peak
// RSS <= 64 MiB). The server, spawned as the IDE spawns it, answers what it
// can, then stops reading: the requests it has not read stay in the pipe
// and in the client. Reported: peak-MiB, and accepted-% (the share of the
// requests' bytes the server read before it stopped reading).
func BenchmarkUnreadListings(b *testing.B) {
	needProcStatus(b)
	const sessions, requests = 3000, 10_000
	bin := serveBinary(b)
	state := filepath.Join(b.TempDir(), "session-state")
	for i := range sessions {
		e2eSession(b, state, sessionName(i))
	}
	var buf strings.Builder
	for i := range requests {
		fmt.Fprintf(&buf, `{"jsonrpc":"2.0","id":%d,"method":"listSessions"}`+"\n", i+1)
	}
	payload := buf.String()
	var peak, accepted float64
	for b.Loop() {
		s := startRawServe(b, bin, nil, "--state-dir", state)
		var written atomic.Int64
		go func() {
			// Written in pieces so that how far the server read shows;
			// ends with an error once the server is killed below.
			for p := payload; len(p) > 0; {
				n, err := io.WriteString(s.in, p[:min(len(p), 4096)])
				written.Add(int64(n))
				if err != nil {
					return
				}
				p = p[n:]
			}
		}()
		pid := s.cmd.Process.Pid
		settled(b, pid, func() int64 { return written.Load() })
		peak = float64(memPeak(b, pid)) / (1 << 20)
		accepted = 100 * float64(written.Load()) / float64(len(payload))
		s.cmd.Process.Kill()
		<-s.exited
		s.exited <- nil
	}
	b.ReportMetric(peak, "peak-MiB")
	b.ReportMetric(accepted, "accepted-%")
}

// settled waits until the server's CPU time and progress() have both
// stood still for half a second: it has done all it can.
func settled(b *testing.B, pid int, progress func() int64) {
	lastCPU, lastP, still := cpuTicks(b, pid), progress(), 0
	for deadline := time.Now().Add(2 * time.Minute); still < 5; {
		if time.Now().After(deadline) {
			b.Fatal("the server never settled")
		}
		time.Sleep(100 * time.Millisecond)
		cpu, p := cpuTicks(b, pid), progress()
		if cpu == lastCPU && p == lastP {
			still++
		} else {
			lastCPU, lastP, still = cpu, p, 0
		}
	}
}

// BenchmarkServeManyDeadLocks is one session holding 100,000 dead locks
// (years of crashes, or a hostile machine), through the binary: canResume
// (goal <= 200 ms) and reclaimStale (goal <= 2 s), each with the server's
// peak RSS (goal <= 64 MiB). stat-floor is what listing the directory and
// one lstat per file cost with nothing else. The locks are synced to disk before each
// reclaim, as locks left over years are. unlink-floor is what unlinking
// the same synced files costs with nothing else, one os.Remove each: the
// file system's part of any reclaim on this machine.
func BenchmarkServeManyDeadLocks(b *testing.B) {
	needProcStatus(b)
	const n = 100_000
	bin := serveBinary(b)
	state := filepath.Join(b.TempDir(), "session-state")
	e2eSession(b, state, "many")
	dir := filepath.Join(state, "many")
	plant := func() []string {
		old := time.Now().Add(-time.Hour)
		var paths []string
		for pid := 1000; pid < 1000+n; pid++ {
			if syscall.Kill(pid, 0) != syscall.ESRCH {
				continue // alive, or not ours to tell
			}
			p := filepath.Join(dir, "inuse."+strconv.Itoa(pid)+".lock")
			if err := os.WriteFile(p, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			os.Chtimes(p, old, old)
			paths = append(paths, p)
		}
		syscall.Sync()
		return paths
	}
	plant()
	server := func() (*exec.Cmd, *rpc.Client) {
		cmd := exec.Command(bin, "serve", "--state-dir", state, "--no-watch")
		c, err := rpc.DialCommand(cmd, rpc.ClientOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return cmd, c
	}
	stop := func(cmd *exec.Cmd, c *rpc.Client) float64 {
		peak := float64(memPeak(b, cmd.Process.Pid)) / (1 << 20)
		c.Close()
		cmd.Wait()
		return peak
	}
	b.Run("canResume", func(b *testing.B) {
		cmd, c := server()
		for b.Loop() {
			var r rpc.CanResumeResult
			if err := c.Call(context.Background(), rpc.MethodCanResume, map[string]any{"sessionId": "many"}, &r); err != nil || r.State != "stale" || len(r.Holders)+r.HoldersOmitted < n/2 {
				b.Fatalf("%v: %s, %d holders + %d omitted", err, r.State, len(r.Holders), r.HoldersOmitted)
			}
		}
		b.ReportMetric(stop(cmd, c), "peak-MiB")
	})
	b.Run("stat-floor", func(b *testing.B) {
		// What reading the directory and one lstat per file cost with
		// nothing else: the file system's part of any judgement of it.
		for b.Loop() {
			names, err := os.ReadDir(dir)
			if err != nil {
				b.Fatal(err)
			}
			for _, de := range names {
				if _, err := os.Lstat(filepath.Join(dir, de.Name())); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("reclaimStale", func(b *testing.B) {
		var peak float64
		for range b.N {
			b.StopTimer()
			plant()
			cmd, c := server()
			b.StartTimer()
			var r rpc.ReclaimStaleResult
			if err := c.Call(context.Background(), rpc.MethodReclaimStale, map[string]any{"sessionIds": []string{"many"}}, &r); err != nil || r.Totals.Reclaimed < n/2 || r.Totals.Failed != 0 {
				b.Fatalf("%v: %+v", err, r.Totals)
			}
			b.StopTimer()
			peak = max(peak, stop(cmd, c))
			b.StartTimer()
		}
		b.ReportMetric(peak, "peak-MiB")
	})
	b.Run("unlink-floor", func(b *testing.B) {
		for range b.N {
			b.StopTimer()
			paths := plant()
			b.StartTimer()
			for _, p := range paths {
				if err := os.Remove(p); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
