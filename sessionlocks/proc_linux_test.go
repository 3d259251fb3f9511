package sessionlocks

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// comm may hold spaces and parentheses; fields are counted from the last ')'.
	// A leader's line, then a thread's (exit_signal -1), then one from a
	// kernel that stops before exit_signal.
	const head = "4242 (we ird) (name)) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 3 0 987654 1000 100 18446744073709551615"
	const tail = " 1 1 0 0 0 0 0 0 0 0 0 0 %d 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	for _, tc := range []struct {
		line       string
		exitSignal int
		has        bool
	}{
		{head + fmt.Sprintf(tail, 17), 17, true},
		{head + fmt.Sprintf(tail, -1), -1, true},
		{head + "\n", 0, false},
	} {
		f, err := parseStat([]byte(tc.line))
		if err != nil || f.state != 'S' || f.ppid != 17 || f.start != 987654 || f.threads != 3 || f.exitSignal != tc.exitSignal || f.hasExitSignal != tc.has {
			t.Fatalf("parseStat(%q) = %+v, %v", tc.line, f, err)
		}
	}
	for _, bad := range []string{"", "4242 (x", "4242 (x) S 1 2", "4242 (x) SS 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 9"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

// TestReadProcSelf: what readProc says of this very process agrees with
// what the process knows of itself: the owner read from /proc is the one
// Force compares with before it signals anything.
func TestReadProcSelf(t *testing.T) {
	p := readProc(os.Getpid())
	if p.err != nil || p.state != procAlive {
		t.Fatalf("readProc(self): state %v, err %v", p.state, p.err)
	}
	if p.uid != os.Geteuid() {
		t.Errorf("uid %d, want %d", p.uid, os.Geteuid())
	}
	if p.ppid != os.Getppid() {
		t.Errorf("ppid %d, want %d", p.ppid, os.Getppid())
	}
	if len(p.argv) == 0 || p.argv[0] != os.Args[0] {
		t.Errorf("argv %q, want it to start with %q", p.argv, os.Args[0])
	}
	if d := time.Since(p.start); d < 0 || d > time.Hour {
		t.Errorf("started %v ago", d)
	}
}

// TestReadProcOwner: the owner of another user's process, as Force sees it
// before refusing to signal it. Only root can start one.
func TestReadProcOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a process as another user")
	}
	const nobody = 65534
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if err := cmd.Start(); err != nil {
		t.Skipf("starting sleep as uid %d: %v", nobody, err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if p := readProc(cmd.Process.Pid); p.uid != nobody {
		t.Errorf("uid %d, want %d (err %v)", p.uid, nobody, p.err)
	}
}

// TestBootTimeIsKept: the boot time is read once and kept while the wall
// clock moves with the monotonic one, and what is kept is what a fresh
// reading gives.
func TestBootTimeIsKept(t *testing.T) {
	first, err := bootTime()
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := readBootTime()
	if err != nil {
		t.Fatal(err)
	}
	if d := fresh.Sub(first); d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("boot time %v, read afresh %v", first, fresh)
	}
	defer readBootTime()
	plant := func(wallShift time.Duration) time.Time {
		planted := fresh.Add(-time.Hour)
		now := time.Now()
		bootKept.Store(&bootReading{boot: planted, wall: now.UnixNano() + int64(wallShift), mono: now.Sub(monoRef)})
		return planted
	}
	// Kept: a planted value comes back, later readings included. time.Now
	// reads its two clocks one after the other, and now and then (preempted
	// in between) they disagree and the boot time is read again: a few tries.
	kept := false
	for try := 0; try < 5 && !kept; try++ {
		planted := plant(0)
		time.Sleep(10 * time.Millisecond)
		got, _ := bootTime()
		kept = got.Equal(planted)
	}
	if !kept {
		t.Fatal("the kept boot time was never used")
	}
	// The wall clock stepped by a second since (as if kept a second later
	// on the wall clock alone): read again.
	planted := plant(time.Second)
	if got, _ := bootTime(); got.Equal(planted) || got.Sub(fresh).Abs() > time.Millisecond {
		t.Fatalf("after a step of the wall clock: boot time %v, want %v read again", got, fresh)
	}
}
