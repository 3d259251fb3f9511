package main

// Peers that misbehave, against the real binary over real pipes: a client
// that never reads stderr, one that stops reading stdout, one that closes
// it, one that piles up thousands of requests. None of them may wedge the
// server, grow it without bound, or keep it alive once nobody can talk to it.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawServe starts serve with pipes the test drives by hand; stderr is
// passed as given (nil: discarded).
type rawServe struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *os.File // the read end of serve's stdout
	exited chan error
}

func startRawServe(t testing.TB, bin string, stderr *os.File, args ...string) *rawServe {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if stderr != nil {
		cmd.Stderr = stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	s := &rawServe{cmd: cmd, in: in, out: r, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.exited
		r.Close()
	})
	return s
}

// send writes newline-delimited requests.
func (s *rawServe) send(t testing.TB, lines ...string) {
	t.Helper()
	if _, err := io.WriteString(s.in, strings.Join(lines, "\n")+"\n"); err != nil {
		t.Fatal(err)
	}
}

// flood sends n canResume requests for session "s" and waits for their
// answers. Should the server wedge, it is killed and the answers end.
func (s *rawServe) flood(t *testing.T, n int) {
	t.Helper()
	lines := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"canResume","params":{"sessionId":"s"}}`, i))
	}
	go io.WriteString(s.in, strings.Join(lines, "\n")+"\n")
	wedged := time.AfterFunc(60*time.Second, func() { s.cmd.Process.Kill() })
	defer wedged.Stop()
	got := 0
	answers(t, s.out, func(string, []byte) bool { got++; return got == n })
}

// waitExit waits (generously: how fast is a benchmark's business) for
// serve to exit.
func (s *rawServe) waitExit(t *testing.T, why string) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-s.exited:
		s.exited <- nil
		return time.Since(start)
	case <-time.After(15 * time.Second):
		t.Fatalf("serve did not exit within 15s %s", why)
		return 0
	}
}

// answers reads newline-delimited answers until pred says stop. The id is
// read off the front, where serve writes it: decoding a megabyte listing
// to find it would cost more than the test.
func answers(t testing.TB, r io.Reader, pred func(id string, line []byte) bool) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		m := answerID.FindSubmatch(sc.Bytes())
		if m == nil {
			t.Fatalf("not an answer: %.200s", sc.Bytes())
		}
		if pred(strings.Trim(string(m[1]), `"`), sc.Bytes()) {
			return
		}
	}
	t.Fatalf("answers ended: %v", sc.Err())
}

var answerID = regexp.MustCompile(`^\{"id":("[^"]*"|\d+|null)`)

func TestServeStderrNobodyReads(t *testing.T) {
	bin := serveBinary(t)
	state := t.TempDir()
	e2eSession(t, state, "s")
	// A pipe whose read end nobody reads: it fills at 64 KiB.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := startRawServe(t, bin, w, "--state-dir", state, "--log-level", "debug", "--no-watch")
	w.Close()
	s.flood(t, 20000) // each is logged at debug: megabytes of log
	s.send(t, `{"jsonrpc":"2.0","id":"status","method":"status"}`)
	answers(t, s.out, func(id string, line []byte) bool {
		if !strings.Contains(string(line), `"logDropped":`) {
			t.Errorf("status does not count the dropped log lines: %s", line)
		}
		return true
	})
}

func TestServeStdoutNotRead(t *testing.T) {
	// runtime.GOOS, not a look for /proc: under Wine the Linux host's /proc shows through drive Z:.
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc to read the server's memory high-water mark")
	}
	bin := serveBinary(t)
	state := t.TempDir()
	for i := range 3000 {
		e2eSession(t, state, fmt.Sprintf("%08d-0000-4000-8000-000000000000", i))
	}
	s := startRawServe(t, bin, nil, "--state-dir", state, "--no-watch")
	const n = 600 // answers of 1.2 MB each: 720 MB were the server to hold them all
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"listSessions"}`, i+1)
	}
	s.send(t, lines...)
	// Everything was read (the pipe took it all); wait until the server
	// has done what it can while nobody reads: its CPU time stops moving.
	pid := s.cmd.Process.Pid
	last, still := cpuTicks(t, pid), 0
	for still < 5 {
		time.Sleep(100 * time.Millisecond)
		if now := cpuTicks(t, pid); now == last {
			still++
		} else {
			last, still = now, 0
		}
	}
	peak := memPeak(t, pid)
	got := 0
	answers(t, s.out, func(id string, line []byte) bool {
		got++
		return got == n
	})
	if peak > 128<<20 {
		t.Errorf("the server's memory peaked at %d MiB with %d answers unread; want it bounded (under 128 MiB)", peak>>20, n)
	}
	t.Logf("memory high-water mark with %d listings unread over 3,000 sessions: %d MiB", n, peak>>20)
}

// cpuTicks is pid's user+system time in clock ticks.
func cpuTicks(t testing.TB, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.Atoi(f[11])
	s, _ := strconv.Atoi(f[12])
	return u + s
}

// memPeak is pid's resident-memory high-water mark (VmHWM), in bytes.
func memPeak(t testing.TB, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

func TestServeExitsWhenStdoutCloses(t *testing.T) {
	bin := serveBinary(t)
	s := startRawServe(t, bin, nil, "--state-dir", t.TempDir())
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"status"}`)
	answers(t, s.out, func(id string, _ []byte) bool { return id == "1" })
	s.out.Close() // the client closes its end of the answers; stdin stays open
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"status"}`)
	took := s.waitExit(t, "after its stdout was closed (EPIPE), with stdin still open")
	t.Logf("exited %v after the failed write", took)
}

func TestServeManyWaitingRequests(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("needs flock(1) to hold an operation lock")
	}
	bin := serveBinary(t)
	state := t.TempDir()
	e2eSession(t, state, "s", 2147483000)
	ops := filepath.Join(state, ".session-operation-locks")
	os.MkdirAll(ops, 0o700)
	// Another process holds the session's operation lock throughout: every
	// reclaim waits for it, half a second each.
	holdLocked(t, filepath.Join(ops, "s.lock"), 120)
	s := startRawServe(t, bin, nil, "--state-dir", state, "--no-watch")
	const n = 4150
	lines := make([]string, 0, n+2)
	for i := 1; i <= n; i++ {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"reclaimStale","params":{"sessionIds":["s"]}}`, i))
	}
	lines = append(lines,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":4150}}`,
		`{"jsonrpc":"2.0","id":"status","method":"status"}`)
	s.send(t, lines...)
	reclaims, sawCancelled, sawStatus := 0, false, false
	answers(t, s.out, func(id string, line []byte) bool {
		switch id {
		case "status":
			sawStatus = true
		case "4150":
			sawCancelled = strings.Contains(string(line), "-32800")
		default:
			reclaims++
		}
		return sawStatus && sawCancelled
	})
	// Every reclaim waits half a second for the operation lock; status and
	// the cancellation are read at once and answered before any of them.
	if reclaims != 0 {
		t.Fatalf("status and the cancellation were answered only after %d reclaims", reclaims)
	}
	s.in.Close()
	took := s.waitExit(t, "after stdin closed with thousands of requests waiting")
	t.Logf("answered status and a cancellation after %d of %d reclaims; exited %v after stdin closed", reclaims, n, took)
}
