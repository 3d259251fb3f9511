package sessionlocks

// Identity on a hostile machine: every case where a pid names something
// other than the CLI that holds this session (a thread, another session's
// CLI, a process in another PID namespace, one that exec'd), with real
// processes. In each, no live lock may be judged stale or removed, and no
// signal may reach anything but the proven owner.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func init() {
	helpers["force-terminate"] = helperForceTerminate
	helpers["thread-of-self"] = helperThreadOfSelf
	helpers["thread-of-parent"] = helperThreadOfParent
	helpers["judge"] = helperJudge
}

// aThreadOf returns a thread id of pid that is not pid itself.
func aThreadOf(t testing.TB, pid int) int {
	t.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil && tid != pid {
			return tid
		}
	}
	t.Fatalf("pid %d has no thread besides its leader", pid)
	return 0
}

// noSIGTERMBefore returns a function that, called after the action under
// test, sends this process sig and reports whether SIGTERM arrived first.
// Go delivers pending signals to a channel lowest number first, so a
// SIGTERM (15) sent before the sentinel (SIGWINCH, 28) is always seen before
// it: no waiting to see that nothing came.
func noSIGTERMBefore(t testing.TB) (check func() bool) {
	t.Helper()
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGWINCH)
	t.Cleanup(func() { signal.Stop(ch) })
	return func() bool {
		syscall.Kill(os.Getpid(), syscall.SIGWINCH)
		return awaitSentinel(ch)
	}
}

// awaitSentinel reports whether SIGWINCH arrives on ch before any SIGTERM.
func awaitSentinel(ch chan os.Signal) bool {
	for s := range ch {
		if s == syscall.SIGTERM {
			return false
		}
		return true
	}
	return false
}

func needRoot(t *testing.T, what string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root for %s (CI runs as root)", what)
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skipf("needs unshare(1) for %s", what)
	}
}

// unsharePID runs commands in a new PID namespace with its own /proc; the
// namespace dies with unshare.
var unsharePID = []string{"unshare", "--pid", "--fork", "--kill-child", "--mount-proc"}

// copilotLink is the test binary under the path npm gives the CLI, so that
// a helper run through it looks like the Copilot CLI to every check but
// one: what the kernel says of the pid a lock names.
func copilotLink(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "node_modules", "@github", "copilot-linux-x64", "copilot")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.Symlink(os.Args[0], p); err != nil {
		t.Fatal(err)
	}
	return p
}

// A lock named with a thread id, written by a CLI-looking process whose
// thread it is, and old enough to judge: kill(tid) would signal the whole
// thread group, here the sidecar, its parent, or the init of a PID
// namespace. Each helper reports "ok" if no SIGTERM reached it.
func TestThreadIDIsNotAProcess(t *testing.T) {
	tests := []struct {
		name   string
		helper string
		prefix []string
		root   bool
	}{
		{"a thread of the sidecar itself", "thread-of-self", nil, false},
		{"a thread of the sidecar's parent", "thread-of-parent", nil, false},
		{"a thread of pid 1 of a PID namespace", "thread-of-self", unsharePID, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root {
				needRoot(t, "a PID namespace")
			}
			cmd := helperCmd(tt.helper, []string{"STATE=" + t.TempDir()}, tt.prefix...)
			// Run through the link, as the CLI is: argv[0] names it.
			cmd.Args[len(tt.prefix)] = copilotLink(t)
			if len(tt.prefix) == 0 {
				cmd.Path = cmd.Args[0]
			}
			out, err := cmd.CombinedOutput()
			if err != nil || lastLine(string(out)) != "ok" {
				t.Fatalf("helper: %v\n%s", err, out)
			}
		})
	}
	t.Run("a .hold named with a thread id, flocked by its process", func(t *testing.T) {
		sd := t.TempDir()
		newSession(t, sd, "s")
		h := startHolder(t, sd, "s", "--name-thread")
		pastSettle(t)
		e := newEngine(t, sd, settle)
		s := mustSession(t, e, "s")
		if len(s.Holders) != 1 || s.Holders[0].Verdict != Live || s.Holders[0].Owner != nil {
			t.Fatalf("holders %+v: a held .hold is live, and a thread's name proves no owner", s.Holders)
		}
		res, err := e.Force(context.Background(), "s", ForceOptions{Terminate: true, Grace: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Signalled) != 0 || readProc(h.pid).state != procAlive {
			t.Fatalf("signalled %v: the pid a lock names was a thread", res.Signalled)
		}
	})
}

// threadLock catches SIGTERM and the sentinel, names session s's lock in
// $STATE after one of this process's threads, dated now, and waits until it
// is old enough to judge.
func threadLock() (sd string, signals chan os.Signal, err error) {
	signals = make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGWINCH)
	sd = os.Getenv("STATE")
	return sd, signals, lockAThread(sd)
}

func lockAThread(sd string) error {
	dir := filepath.Join(sd, "s")
	os.MkdirAll(dir, 0o700)
	ents, _ := os.ReadDir("/proc/self/task")
	tid := 0
	for _, ent := range ents {
		if n, _ := strconv.Atoi(ent.Name()); n != os.Getpid() && n > 0 {
			tid = n
		}
	}
	if tid == 0 {
		return fmt.Errorf("no thread")
	}
	if err := os.WriteFile(filepath.Join(dir, lockFileName(tid)), []byte(strconv.Itoa(tid)+"\n"), 0o644); err != nil {
		return err
	}
	return nil
}

// helperThreadOfSelf is the sidecar, and (in a namespace) its pid 1: it
// forces a session whose lock names one of its own threads.
func helperThreadOfSelf() int {
	sd, ch, err := threadLock()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	e := New(Options{StateDir: sd, Settle: settle, Logger: quiet, Now: pastSettleClock})
	res, err := e.Force(context.Background(), "s", ForceOptions{Terminate: true, Grace: 100 * time.Millisecond})
	if err != nil {
		fmt.Println("force:", err)
		return 1
	}
	syscall.Kill(os.Getpid(), syscall.SIGWINCH)
	if !awaitSentinel(ch) || len(res.Signalled) != 0 {
		fmt.Println("signalled", res.Signalled)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// helperThreadOfParent names the lock after one of its own threads and
// runs the sidecar as its child, which forces the session and sends it the
// sentinel.
func helperThreadOfParent() int {
	sd, ch, err := threadLock()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	out, err := helperCmd("force-terminate", []string{"STATE=" + sd, "SESSION=s", "SENTINEL=parent"}).CombinedOutput()
	if err != nil {
		fmt.Printf("sidecar: %v %s\n", err, out)
		return 1
	}
	if !awaitSentinel(ch) {
		fmt.Printf("the sidecar's parent was signalled: %s\n", out)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// helperForceTerminate forces $SESSION in $STATE with terminate, prints the
// result, and sends its parent (SENTINEL=parent) the sentinel.
func helperForceTerminate() int {
	e := New(Options{StateDir: os.Getenv("STATE"), Settle: settle, Logger: quiet, Now: pastSettleClock})
	res, err := e.Force(context.Background(), os.Getenv("SESSION"), ForceOptions{Terminate: true, Grace: 100 * time.Millisecond})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	b, _ := json.Marshal(struct{ Signalled, Exited []int }{res.Signalled, res.Exited})
	fmt.Println(string(b))
	if os.Getenv("SENTINEL") == "parent" {
		syscall.Kill(os.Getppid(), syscall.SIGWINCH)
	}
	return 0
}

func TestAnotherSessionsCLIIsNotSignalled(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "a")
	a := startHolder(t, sd, "a")
	aDir := filepath.Join(sd, "a")
	// b: a copy of the live session, as cp -r and cp -a make it; c: an
	// old-format lock naming a's CLI.
	for _, cp := range []struct{ id, flag string }{{"b", "-r"}, {"b-preserved", "-a"}} {
		if out, err := exec.Command("cp", cp.flag, aDir, filepath.Join(sd, cp.id)).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", cp.flag, err, out)
		}
	}
	cDir := newSession(t, sd, "c")
	writeLock(t, cDir, a.pid, time.Now())
	pastSettle(t)
	e := newEngine(t, sd, settle)
	for _, id := range []string{"b", "b-preserved", "c"} {
		t.Run(id, func(t *testing.T) {
			s := mustSession(t, e, id)
			if len(s.Holders) != 1 || s.Holders[0].Owner != nil {
				t.Fatalf("holders %+v: nothing proves a's CLI holds %s", s.Holders, id)
			}
			res, err := e.Force(context.Background(), id, ForceOptions{Terminate: true, Grace: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Signalled) != 0 || readProc(a.pid).state != procAlive {
				t.Fatalf("a's CLI was signalled for session %s: %v", id, res.Signalled)
			}
		})
	}
	for _, f := range []string{lockFileName(a.pid), holdFileName(a.pid)} {
		if !exists(filepath.Join(aDir, f)) {
			t.Errorf("a's %s is gone", f)
		}
	}
	if h := mustSession(t, e, "a").Holders[0]; h.Verdict != Live || h.Owner == nil || h.Owner.PID != a.pid {
		t.Errorf("a: %s/%s owner %+v, want live and owned by pid %d", h.Verdict, h.Reason, h.Owner, a.pid)
	}
}

// startInNamespace runs the fake CLI in a new PID namespace with pid (as
// the namespace numbers it) inner, and returns once its locks are in place.
func startInNamespace(t *testing.T, sd, id string, inner int, args ...string) {
	t.Helper()
	cli := strings.Join(append([]string{fakeCLI, "--state-dir", sd, "--session", id}, args...), " ")
	// Backgrounded (&), the CLI is forked after ns_last_pid is set, and so
	// gets inner; the shell stays pid 1 and waits.
	script := fmt.Sprintf("echo %d > /proc/sys/kernel/ns_last_pid && { %s & wait; }", inner-1, cli)
	cmd := exec.Command(unsharePID[0], append(unsharePID[1:], "sh", "-c", script)...)
	if line := startReady(t, cmd, func() { cmd.Process.Kill(); cmd.Wait() }); line != fmt.Sprintf("ready %d\n", inner) {
		t.Fatalf("CLI in the namespace: %q (wanted pid %d there)", line, inner)
	}
}

func TestPIDNamespaces(t *testing.T) {
	needRoot(t, "PID namespaces")
	t.Run("a host CLI and a container CLI with the same pid: terminate reaches the container's", func(t *testing.T) {
		sd := t.TempDir()
		newSession(t, sd, "host")
		newSession(t, sd, "container")
		host := startHolder(t, sd, "host")
		startInNamespace(t, sd, "container", host.pid)
		e := newEngine(t, sd, settle)
		h := mustSession(t, e, "container").Holders[0]
		if h.PID != host.pid || h.Verdict != Live || h.Owner == nil || h.Owner.PID == host.pid || h.Owner.NamespacePID != host.pid {
			t.Fatalf("container holder: pid %d %s/%s owner %+v; want live, owned by another process than pid %d", h.PID, h.Verdict, h.Reason, h.Owner, host.pid)
		}
		res, err := e.Force(context.Background(), "container", ForceOptions{Terminate: true, Grace: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Signalled, []int{h.Owner.PID}) || !slices.Equal(res.Exited, []int{h.Owner.PID}) {
			t.Errorf("signalled %v exited %v, want the container CLI (pid %d here)", res.Signalled, res.Exited, h.Owner.PID)
		}
		if readProc(host.pid).state != procAlive || !exists(filepath.Join(sd, "host", holdFileName(host.pid))) {
			t.Fatal("the host CLI was signalled, or lost its files")
		}
	})
	t.Run("an old-format CLI in a container whose pid nobody has here", func(t *testing.T) {
		sd := t.TempDir()
		newSession(t, sd, "s")
		inner := deadPID(t)
		startInNamespace(t, sd, "s", inner, "--old")
		pastSettle(t)
		e := newEngine(t, sd, settle)
		h := mustSession(t, e, "s").Holders[0]
		if h.Verdict != Live || h.Reason != ReasonVerified || !strings.Contains(h.Detail, "another PID namespace") {
			t.Errorf("verdict %s/%s: %s; want live/verified in another PID namespace", h.Verdict, h.Reason, h.Detail)
		}
		if res, err := e.Reclaim(context.Background(), ReclaimOptions{All: true}); err != nil || len(res.Reclaimed) != 0 {
			t.Fatalf("reclaim: %+v %v", res, err)
		}
		if !exists(filepath.Join(sd, "s", lockFileName(inner))) {
			t.Fatal("the container CLI's lock was deleted")
		}
	})
	t.Run("an old-format CLI in a container whose pid a later process has here", func(t *testing.T) {
		sd := t.TempDir()
		dir := newSession(t, sd, "s")
		sl := startSleeper(t)
		startInNamespace(t, sd, "s", sl.Process.Pid, "--old")
		// Written before the sleeper started: here the pid looks reused.
		old := readProc(sl.Process.Pid).start.Add(-10 * time.Second)
		os.Chtimes(filepath.Join(dir, lockFileName(sl.Process.Pid)), old, old)
		e := newEngine(t, sd, settle)
		h := mustSession(t, e, "s").Holders[0]
		if h.Verdict != Live || !strings.Contains(h.Detail, "another PID namespace") {
			t.Errorf("verdict %s/%s: %s; want live in another PID namespace", h.Verdict, h.Reason, h.Detail)
		}
		if res, _ := e.Reclaim(context.Background(), ReclaimOptions{All: true}); len(res.Reclaimed) != 0 {
			t.Fatalf("reclaimed %+v", res.Reclaimed)
		}
	})
	for _, format := range []string{"old", "new"} {
		t.Run("the sidecar in a PID namespace, a "+format+"-format CLI outside", func(t *testing.T) {
			sd := t.TempDir()
			newSession(t, sd, "s")
			args := []string{}
			if format == "old" {
				args = append(args, "--old")
			}
			cli := startHolder(t, sd, "s", args...)
			pastSettle(t)
			out, err := helperCmd("judge", []string{"STATE=" + sd, "SESSION=s"}, unsharePID...).CombinedOutput()
			if err != nil {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			var got judged
			if err := json.Unmarshal([]byte(lastLine(string(out))), &got); err != nil {
				t.Fatalf("helper said %s", out)
			}
			want := Unknown
			if format == "new" {
				want = Live // the .hold's kernel lock is seen from any namespace
			}
			if got.Verdict != want || got.Reclaimed != 0 || got.Owned {
				t.Errorf("from inside: %+v, want %s, nothing reclaimed, no owner proven", got, want)
			}
			if format == "old" && !strings.Contains(got.Detail, "PID namespace of its own") {
				t.Errorf("detail %q does not say the sidecar cannot see outside its namespace", got.Detail)
			}
			if readProc(cli.pid).state != procAlive || !exists(filepath.Join(sd, "s", lockFileName(cli.pid))) {
				t.Fatal("the CLI outside was signalled or lost its lock")
			}
		})
	}
}

// judged is what helperJudge reports.
type judged struct {
	Verdict   Verdict
	Reason    Reason
	Detail    string
	Reclaimed int
	Owned     bool // an owner was proven: one Force could signal
}

// helperJudge judges $SESSION in $STATE and reclaims, printing what it
// found and did.
func helperJudge() int {
	e := New(Options{StateDir: os.Getenv("STATE"), Settle: settle, Logger: quiet, Now: pastSettleClock})
	id := os.Getenv("SESSION")
	s, err := e.Judge(context.Background(), id)
	if err != nil || len(s.Holders) != 1 {
		fmt.Println("session:", err, s.Holders)
		return 1
	}
	h := s.Holders[0]
	res, _ := e.Reclaim(context.Background(), ReclaimOptions{IDs: []string{id}})
	b, _ := json.Marshal(judged{h.Verdict, h.Reason, h.Detail, len(res.Reclaimed), h.Owner != nil})
	fmt.Println(string(b))
	return 0
}

func TestExecBetweenJudgementAndSignal(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "s")
	h := startHolder(t, sd, "s", "--exec-on-usr1", "sleep 600")
	e := newEngine(t, sd, settle)
	e.beforeSignal = func(o *Owner) {
		syscall.Kill(o.PID, syscall.SIGUSR1)
		waitFor(t, "the CLI to exec sleep", func() bool {
			p := readProc(o.PID)
			return len(p.argv) > 0 && p.argv[0] == "sleep"
		})
	}
	res, err := e.Force(context.Background(), "s", ForceOptions{Terminate: true, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Signalled) != 0 || readProc(h.pid).state != procAlive {
		t.Fatalf("a process that exec'd since it was judged was signalled: %v", res.Signalled)
	}
	if len(res.NotSignalled) != 1 || !strings.Contains(res.NotSignalled[0].Why, "exec") {
		t.Errorf("not signalled %+v, want one saying it exec'd", res.NotSignalled)
	}
}

func TestOldFormatOwnerBySessionDB(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "s")
	h := startHolder(t, sd, "s", "--old", "--open-db")
	pastSettle(t)
	e := newEngine(t, sd, settle)
	s := mustSession(t, e, "s")
	if o := s.Holders[0].Owner; o == nil || o.PID != h.pid || !strings.Contains(o.Evidence, "session.db") {
		t.Fatalf("owner %+v, want pid %d by its open session.db", o, h.pid)
	}
	res, err := e.Force(context.Background(), "s", ForceOptions{Terminate: true, Grace: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Exited, []int{h.pid}) {
		t.Fatalf("signalled %v exited %v not signalled %+v, want pid %d stopped", res.Signalled, res.Exited, res.NotSignalled, h.pid)
	}
}

func TestRecognitionByExecutableAndThreadName(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "bin", "copilot")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	b, err := os.ReadFile(fakeCLI)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		args []string
		want Reason
	}{
		{"a copilot elsewhere, its own name (AWS's, say)", bin, nil, ReasonUnverified},
		{"a copilot elsewhere whose main thread is MainThread (the install script's)", bin, []string{"--comm", "MainThread"}, ReasonVerified},
		{"npm's binary started by its bare name", fakeCLI, nil, ReasonVerified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sd := t.TempDir()
			newSession(t, sd, "s")
			cmd := exec.Command(tt.path, append([]string{"--state-dir", sd, "--session", "s", "--old"}, tt.args...)...)
			cmd.Args[0] = "copilot" // as a shell starts what it found on PATH
			startReady(t, cmd, func() { cmd.Process.Kill(); cmd.Wait() })
			pastSettle(t)
			h := mustSession(t, newEngine(t, sd, settle), "s").Holders[0]
			if h.Reason != tt.want {
				t.Errorf("%s: %s", h.Reason, h.Detail)
			}
		})
	}
}

func TestClocksThatDisagree(t *testing.T) {
	y2300 := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	// The earliest time a file system with 32-bit times (ext4 with 128-byte
	// inodes) stores: where a later or earlier date is clamped.
	floor32 := time.Unix(-1<<31, 0)
	tests := []struct {
		name    string
		live    bool                            // a live old-format CLI, else a dead pid
		written func(start time.Time) time.Time // the lock's mtime, from the process's start
		want    Verdict
		reason  Reason
		detail  string
	}{
		{"a CLI's lock stamped 3 s before it started (a server's clock behind)", true, func(s time.Time) time.Time { return s.Add(-3 * time.Second) }, Live, ReasonVerified, "allowed for clocks that disagree"},
		{"a CLI's lock stamped 3 s in the future", true, func(time.Time) time.Time { return time.Now().Add(3 * time.Second) }, Live, ReasonVerified, "in the future"},
		{"a CLI's lock stamped in 2300", true, func(time.Time) time.Time { return y2300 }, Live, ReasonVerified, "2300-01-01"},
		{"a CLI's lock at the floor of a file system with 32-bit times (where it clamps 2300)", true, func(time.Time) time.Time { return floor32 }, Live, ReasonVerified, "before any Copilot CLI existed"},
		{"a dead pid's lock stamped in 2300", false, func(time.Time) time.Time { return y2300 }, Stale, ReasonProcessExited, "in the future"},
		{"a dead pid's lock stamped before 1970", false, func(time.Time) time.Time { return time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC) }, Stale, ReasonProcessExited, "1960-01-01"},
		{"a CLI that started 2 minutes after its lock: the pid was reused", true, func(s time.Time) time.Time { return s.Add(-2 * time.Minute) }, Stale, ReasonPIDReused, "more than the 1m allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sd := t.TempDir()
			w := tt.written(time.Now())
			if !storesTime(t, sd, w) {
				// Not where the file system clamps dates: tmpfs stores them all.
				sd = shmDir(t)
				if !storesTime(t, sd, w) {
					t.Skipf("no file system here stores %s", w)
				}
			}
			dir := newSession(t, sd, "s")
			pid := deadPID(t)
			if tt.live {
				h := startHolder(t, sd, "s", "--old")
				pid = h.pid
				w = tt.written(readProc(h.pid).start)
			}
			if w.Before(sinceBoot(t, 0)) && tt.reason == ReasonPIDReused {
				t.Skip("the machine booted too recently to back-date a lock by 2 minutes")
			}
			writeLock(t, dir, pid, w)
			pastSettle(t)
			e := newEngine(t, sd, settle)
			h := mustSession(t, e, "s").Holders[0]
			if h.Verdict != tt.want || h.Reason != tt.reason || !strings.Contains(h.Detail, tt.detail) {
				t.Errorf("%s/%s: %s; want %s/%s mentioning %q", h.Verdict, h.Reason, h.Detail, tt.want, tt.reason, tt.detail)
			}
			if !h.LockWrittenAt.Equal(w) {
				t.Errorf("lock written at %s, want %s", h.LockWrittenAt, w)
			}
			res, err := e.Reclaim(context.Background(), ReclaimOptions{All: true})
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == Live && (len(res.Reclaimed) != 0 || !exists(filepath.Join(dir, lockFileName(pid)))) {
				t.Fatal("a live CLI's lock was reclaimed")
			}
		})
	}
}

// storesTime reports whether a file in dir keeps modification time w.
func storesTime(t *testing.T, dir string, w time.Time) bool {
	p := filepath.Join(dir, "probe")
	os.WriteFile(p, nil, 0o600)
	defer os.Remove(p)
	touch(t, p, w)
	fi, err := os.Stat(p)
	return err == nil && fi.ModTime().Equal(w)
}

// shmDir is a temporary directory on tmpfs.
func shmDir(t *testing.T) string {
	d, err := os.MkdirTemp("/dev/shm", "sessionlocks-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestSharedFileSystems(t *testing.T) {
	type want struct {
		verdict Verdict
		detail  string
	}
	setups := []struct {
		name  string
		setup func(t *testing.T, sd string) (pid int)
		want  want
	}{
		{"a dead pid's old-format lock", func(t *testing.T, sd string) int {
			pid := deadPID(t)
			writeLock(t, filepath.Join(sd, "s"), pid, time.Now().Add(-time.Minute))
			return pid
		}, want{Unknown, "a CLI on another machine would look the same"}},
		{"a SIGKILLed CLI's .lock and free .hold", func(t *testing.T, sd string) int {
			h := startHolder(t, sd, "s")
			h.killAndReap()
			pastSettle(t)
			return h.pid
		}, want{Unknown, "Nobody on this machine holds the kernel lock"}},
		{"a live CLI", func(t *testing.T, sd string) int {
			return startHolder(t, sd, "s").pid
		}, want{Live, "kernel lock"}},
	}
	type fsCase struct {
		name  string
		mount func(t *testing.T) (stateDir string, opts Options)
	}
	cases := []fsCase{
		{"nfs (the type injected)", func(t *testing.T) (string, Options) { return t.TempDir(), Options{FSType: "nfs"} }},
		{"fuse (bindfs, a real FUSE mount)", mountBindfs},
	}
	for _, fc := range cases {
		for _, sc := range setups {
			t.Run(fc.name+"/"+sc.name, func(t *testing.T) {
				sd, opts := fc.mount(t)
				newSession(t, sd, "s")
				pid := sc.setup(t, sd)
				opts.StateDir, opts.Settle, opts.Logger, opts.Now = sd, settle, quiet, clockOf(t)
				e := New(opts)
				if v := e.platform(); !v.Shared {
					t.Fatalf("platform %+v: not shared", v)
				}
				h := mustSession(t, e, "s").Holders[0]
				if h.Verdict != sc.want.verdict || !strings.Contains(h.Detail, sc.want.detail) {
					t.Errorf("%s/%s: %s; want %s mentioning %q", h.Verdict, h.Reason, h.Detail, sc.want.verdict, sc.want.detail)
				}
				res, err := e.Reclaim(context.Background(), ReclaimOptions{All: true})
				if err != nil || len(res.Reclaimed) != 0 || !exists(filepath.Join(sd, "s", lockFileName(pid))) {
					t.Fatalf("reclaimed on a shared file system: %+v %v", res, err)
				}
			})
		}
	}
	t.Run("a bind mount is local", func(t *testing.T) {
		needRoot(t, "mount --bind")
		src, dst := t.TempDir(), t.TempDir()
		if out, err := exec.Command("mount", "--bind", src, dst).CombinedOutput(); err != nil {
			t.Skipf("mount --bind: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("umount", "-l", dst).Run() })
		dir := newSession(t, dst, "s")
		writeLock(t, dir, deadPID(t), time.Now().Add(-time.Minute))
		e := newEngine(t, dst, settle)
		if v := e.platform(); v.Shared {
			t.Fatalf("platform %+v: a bind mount of a local directory is local", v)
		}
		if h := mustSession(t, e, "s").Holders[0]; h.Verdict != Stale {
			t.Errorf("%s/%s: %s", h.Verdict, h.Reason, h.Detail)
		}
	})
}

// mountBindfs mounts a temporary directory through bindfs, a FUSE file
// system, and returns the mount point.
func mountBindfs(t *testing.T) (string, Options) {
	needRoot(t, "a FUSE mount")
	if _, err := exec.LookPath("bindfs"); err != nil {
		t.Skip("needs bindfs (apt install bindfs) for a real FUSE mount")
	}
	src, dst := t.TempDir(), t.TempDir()
	if out, err := exec.Command("bindfs", src, dst).CombinedOutput(); err != nil {
		t.Skipf("bindfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if exec.Command("fusermount", "-u", dst).Run() != nil {
			exec.Command("umount", "-l", dst).Run()
		}
	})
	return dst, Options{}
}

func init() {
	helpers["old-node-cli"] = helperOldNodeCLI
	helpers["fork-holder"] = helperForkHolder
}

// The findings of an adversarial review, each reproduced with real
// processes before it was fixed.
func TestReviewFindings(t *testing.T) {
	t.Run("a container CLI started after the list of other namespaces was made", func(t *testing.T) {
		needRoot(t, "PID namespaces")
		sd := t.TempDir()
		writeLock(t, newSession(t, sd, "dead"), deadPID(t), time.Now().Add(-time.Hour))
		newSession(t, sd, "s")
		e := newEngine(t, sd, settle)
		e.List(context.Background(), ListOptions{}) // makes the list of other namespaces' processes
		inner := deadPID(t)
		startInNamespace(t, sd, "s", inner, "--old")
		res, _ := e.Reclaim(context.Background(), ReclaimOptions{IDs: []string{"s"}})
		if len(res.Reclaimed) != 0 || !exists(filepath.Join(sd, "s", lockFileName(inner))) {
			t.Fatalf("a live container CLI's lock was reclaimed: %+v", res.Reclaimed)
		}
	})
	t.Run("a container CLI started through npm's bin link, which only the container has", func(t *testing.T) {
		needRoot(t, "PID and mount namespaces")
		sd := t.TempDir()
		newSession(t, sd, "s")
		inner := deadPID(t)
		script := fmt.Sprintf(`set -e
mount -t tmpfs none /mnt
mkdir -p /mnt/lib/node_modules/@github/copilot /mnt/bin
echo 'import("./index.js")' > /mnt/lib/node_modules/@github/copilot/npm-loader.js
ln -s ../lib/node_modules/@github/copilot/npm-loader.js /mnt/bin/copilot
echo %d > /proc/sys/kernel/ns_last_pid
(exec -a node %s /mnt/bin/copilot --resume) & wait`, inner-1, os.Args[0])
		cmd := exec.Command("unshare", append(unsharePID[1:], "bash", "-c", script)...)
		cmd.Env = append(os.Environ(), helperEnv+"=old-node-cli", "STATE="+sd, "SESSION=s")
		if line := startReady(t, cmd, func() { cmd.Process.Kill(); cmd.Wait() }); line != fmt.Sprintf("ready %d\n", inner) {
			t.Fatalf("helper: %q", line)
		}
		pastSettle(t)
		e := newEngine(t, sd, settle)
		h := mustSession(t, e, "s").Holders[0]
		if h.Verdict != Live || !strings.Contains(h.Detail, "another PID namespace") {
			t.Errorf("%s/%s: %s; want live, the CLI in another PID namespace", h.Verdict, h.Reason, h.Detail)
		}
		if res, _ := e.Reclaim(context.Background(), ReclaimOptions{IDs: []string{"s"}}); len(res.Reclaimed) != 0 {
			t.Fatal("a live container CLI's lock was reclaimed")
		}
	})
	t.Run("an inode with the same number on another device", func(t *testing.T) {
		needRoot(t, "tmpfs mounts")
		// Two fresh tmpfs mounts number their inodes alike: a file locked
		// on one has the number of a .hold on the other.
		sd, other := t.TempDir(), t.TempDir()
		for _, m := range []string{sd, other} {
			if out, err := exec.Command("mount", "-t", "tmpfs", "none", m).CombinedOutput(); err != nil {
				t.Skipf("mount tmpfs: %v %s", err, out)
			}
			t.Cleanup(func() { exec.Command("umount", "-l", m).Run() })
		}
		// On the state dir's mount: the session dir, its workspace.yaml,
		// the .lock and the .hold take the next four numbers; on the other,
		// the fourth file made gets the .hold's.
		var locked string
		for i := range 4 {
			locked = filepath.Join(other, "f"+strconv.Itoa(i))
			os.WriteFile(locked, nil, 0o644)
		}
		fl := flockHolder(t, locked, 600)
		waitLockedHere(t, locked)
		dir := newSession(t, sd, "s")
		writeLock(t, dir, fl.Process.Pid, time.Time{})
		hold := writeHold(t, dir, fl.Process.Pid, time.Time{})
		pastSettle(t)
		lid, _ := lstatID(locked)
		hid, _ := lstatID(hold)
		if lid.ino != hid.ino || lid.dev == hid.dev {
			t.Skipf("tmpfs numbers inodes otherwise here (locked %d on %x, .hold %d on %x)", lid.ino, lid.dev, hid.ino, hid.dev)
		}
		e := newEngine(t, sd, settle)
		if o := mustSession(t, e, "s").Holders[0].Owner; o != nil {
			t.Fatalf("proven owner %+v by a lock on another device's file", o)
		}
		res, err := e.Force(context.Background(), "s", ForceOptions{Terminate: true, Grace: 200 * time.Millisecond})
		if err != nil || len(res.Signalled) != 0 || readProc(fl.Process.Pid).state != procAlive {
			t.Fatalf("signalled %v (%v)", res.Signalled, err)
		}
	})
	t.Run("a flock inherited by a child, the locker's pid reused", func(t *testing.T) {
		if os.Geteuid() != 0 || nestedPIDNamespace() {
			t.Skip("needs root in the machine's own PID namespace to steer ns_last_pid")
		}
		sd := t.TempDir()
		dir := newSession(t, sd, "s")
		var pid int
		var reuser *exec.Cmd
		for try := 0; ; try++ {
			cmd := helperCmd("fork-holder", []string{"STATE=" + sd, "SESSION=s"})
			out, err := cmd.Output()
			f := strings.Fields(string(out))
			if err != nil || len(f) != 3 || f[0] != "ready" {
				t.Fatalf("helper: %q %v", out, err)
			}
			pid, _ = strconv.Atoi(f[1])
			child, _ := strconv.Atoi(f[2])
			t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
			restore := steerNextPID(pid)
			reuser = startSleeper(t)
			restore()
			if reuser.Process.Pid == pid {
				break
			}
			if try == 5 {
				t.Skip("another process took the pid each time")
			}
			os.Remove(filepath.Join(dir, lockFileName(pid)))
			os.Remove(filepath.Join(dir, holdFileName(pid)))
		}
		e := newEngine(t, sd, settle)
		res, err := e.Force(context.Background(), "s", ForceOptions{Terminate: true, Grace: 200 * time.Millisecond})
		if err != nil || len(res.Signalled) != 0 || readProc(pid).state != procAlive {
			t.Fatalf("signalled %v (%v): the process that reused the locker's pid does not hold the .hold", res.Signalled, err)
		}
	})
	t.Run("a CLI with a descriptor on a stuck FUSE mount", func(t *testing.T) {
		mount, bindfs := bindfsMount(t)
		sd := t.TempDir()
		newSession(t, sd, "s")
		h := startHolder(t, sd, "s", "--old", "--open-db", "--open", filepath.Join(mount, "elsewhere"))
		pastSettle(t)
		bindfs.Signal(syscall.SIGSTOP)
		t.Cleanup(func() { bindfs.Signal(syscall.SIGCONT) })
		done := make(chan Session, 1)
		go func() { done <- mustSession(t, newEngine(t, sd, settle), "s") }()
		select {
		case s := <-done:
			if o := s.Holders[0].Owner; o == nil || o.PID != h.pid {
				t.Errorf("owner %+v, want pid %d by its open session.db", o, h.pid)
			}
		case <-time.After(15 * time.Second):
			bindfs.Signal(syscall.SIGCONT) // lets the stuck call return, so the test can end
			t.Fatal("judging hung on a stuck file system another of the CLI's descriptors is on")
		}
	})
	t.Run("a process whose main thread has exited while its other threads run", func(t *testing.T) {
		cc, err := exec.LookPath("cc")
		if err != nil {
			t.Skip("needs a C compiler to build a program whose main thread exits (pthread_exit)")
		}
		src := filepath.Join(t.TempDir(), "zl.c")
		os.WriteFile(src, []byte(zombieLeaderC), 0o644)
		bin := filepath.Join(t.TempDir(), "node_modules", "@github", "copilot-linux-x64", "copilot")
		os.MkdirAll(filepath.Dir(bin), 0o755)
		if out, err := exec.Command(cc, "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
			t.Skipf("cc: %v %s", err, out)
		}
		sd := t.TempDir()
		dir := newSession(t, sd, "s")
		cmd := exec.Command(bin, dir)
		startReady(t, cmd, func() { cmd.Process.Kill(); cmd.Wait() })
		pastSettle(t)
		e := newEngine(t, sd, settle)
		h := mustSession(t, e, "s").Holders[0]
		if h.Verdict == Stale {
			t.Errorf("%s/%s: %s; the process runs on", h.Verdict, h.Reason, h.Detail)
		}
		if res, _ := e.Reclaim(context.Background(), ReclaimOptions{IDs: []string{"s"}}); len(res.Reclaimed) != 0 {
			t.Fatalf("reclaimed the lock of a running process (pid %d)", cmd.Process.Pid)
		}
	})
}

// zombieLeaderC writes an old-format lock, starts a thread that runs on,
// and ends its main thread: /proc/<pid>/stat then says Z.
const zombieLeaderC = `#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *run(void *a) { for (;;) sleep(100); return 0; }
int main(int argc, char **argv) {
  char p[4096]; snprintf(p, sizeof p, "%s/inuse.%d.lock", argv[1], getpid());
  FILE *f = fopen(p, "w"); fprintf(f, "%d\n", getpid()); fclose(f);
  pthread_t t; pthread_create(&t, 0, run, 0);
  printf("ready %d\n", getpid()); fflush(stdout);
  pthread_exit(0);
}
`

// helperOldNodeCLI writes an old-format lock naming its own pid and waits.
func helperOldNodeCLI() int {
	dir := filepath.Join(os.Getenv("STATE"), os.Getenv("SESSION"))
	pid := os.Getpid()
	if err := os.WriteFile(filepath.Join(dir, lockFileName(pid)), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		fmt.Println("err", err)
		return 1
	}
	fmt.Printf("ready %d\n", pid)
	time.Sleep(time.Hour)
	return 0
}

// helperForkHolder makes its .lock and .hold, flocks the .hold, hands the
// descriptor to a child (sleep) and exits: the child now holds the flock.
func helperForkHolder() int {
	dir := filepath.Join(os.Getenv("STATE"), os.Getenv("SESSION"))
	pid := os.Getpid()
	os.WriteFile(filepath.Join(dir, lockFileName(pid)), []byte(strconv.Itoa(pid)+"\n"), 0o644)
	f, err := os.OpenFile(filepath.Join(dir, holdFileName(pid)), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		fmt.Println("err", err)
		return 1
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		fmt.Println("err", err)
		return 1
	}
	c := exec.Command("sleep", "600")
	c.ExtraFiles = []*os.File{f}
	if err := c.Start(); err != nil {
		fmt.Println("err", err)
		return 1
	}
	fmt.Printf("ready %d %d\n", pid, c.Process.Pid)
	return 0
}

// waitLockedHere waits until someone holds an exclusive flock on p.
func waitLockedHere(t *testing.T, p string) {
	t.Helper()
	waitFor(t, "the flock on "+p, func() bool {
		f, err := os.Open(p)
		if err != nil {
			return false
		}
		defer f.Close()
		return tryLock(f) == errLockBusy
	})
}

// bindfsMount mounts a temporary directory through bindfs, a FUSE file
// system, and returns the mount point and the bindfs process.
func bindfsMount(t *testing.T) (string, *os.Process) {
	dst, _ := mountBindfs(t)
	out, err := exec.Command("pgrep", "-n", "-f", "bindfs .* "+dst).Output()
	pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid == 0 {
		t.Skip("cannot find the bindfs process")
	}
	p, _ := os.FindProcess(pid)
	return dst, p
}
