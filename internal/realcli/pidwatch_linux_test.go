package realcli

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCounterPassed(t *testing.T) {
	for _, c := range []struct {
		from, to, pid int
		want          bool
	}{
		{100, 100, 100, false}, // nothing given out
		{100, 200, 150, true},
		{100, 200, 200, true}, // the last one given out
		{100, 200, 100, false},
		{100, 200, 250, false},
		{100, 200, 50, false},
		{32000, 400, 32500, true}, // wrapped at pid_max
		{32000, 400, 350, true},
		{32000, 400, 1000, false},
		{5000, 4998, 4998, true}, // rewound, maybe further, and came up to 4998
		{5000, 4998, 4000, true},
		{5000, 4998, 4999, false}, // rewound: 4999 is given out next, not yet
		{5000, 4998, 6000, true},  // or wrapped
	} {
		if got := counterPassed(c.from, c.to, c.pid); got != c.want {
			t.Errorf("counterPassed(%d, %d, %d) = %v, want %v", c.from, c.to, c.pid, got, c.want)
		}
	}
}

// watchFor watches pid for d.
func watchFor(pid int, d time.Duration) PIDReport {
	w := WatchPID(pid, nil)
	time.Sleep(d)
	return w.Stop()
}

func TestWatchPIDSeesProcessThreadAndZombie(t *testing.T) {
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	r := watchFor(sleeper.Process.Pid, 20*time.Millisecond)
	if len(r.Occupants) != 1 || r.Occupants[0].Comm != "sleep" || r.Occupants[0].TGID != sleeper.Process.Pid || r.Free() {
		t.Errorf("a live process: %s", r)
	}

	// A thread of this test process: kill(tid, 0) succeeds for it too.
	tasks, _ := os.ReadDir("/proc/self/task")
	tid := 0
	for _, e := range tasks {
		if n, _ := strconv.Atoi(e.Name()); n != os.Getpid() {
			tid = n
		}
	}
	if tid == 0 {
		t.Fatal("this process has no thread but its main one")
	}
	r = watchFor(tid, 20*time.Millisecond)
	if len(r.Occupants) == 0 || r.Occupants[0].TGID != os.Getpid() || !strings.Contains(r.String(), "a thread") {
		t.Errorf("thread %d of pid %d: %s", tid, os.Getpid(), r)
	}

	// A child that exited and is not reaped yet.
	child := exec.Command("true")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	for o, _ := Task(child.Process.Pid); o.State != 'Z'; o, _ = Task(child.Process.Pid) {
		time.Sleep(time.Millisecond)
	}
	r = watchFor(child.Process.Pid, 20*time.Millisecond)
	if len(r.Occupants) != 1 || r.Occupants[0].State != 'Z' || !strings.Contains(r.String(), "zombie") {
		t.Errorf("a zombie: %s", r)
	}
}

func TestWatchPIDOfReapedProcess(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	r := watchFor(gone.Process.Pid, 50*time.Millisecond)
	if r.CounterErr != nil {
		t.Fatal(r.CounterErr)
	}
	if r.Samples < 2 || r.From == 0 {
		t.Errorf("did not sample: %s", r)
	}
	if !r.Free() {
		// Only if the counter came round to it: something rewound it.
		if !r.Passed {
			t.Errorf("a reaped pid was seen taken without the counter passing it: %s", r)
		}
		t.Skipf("pid %d was given out again during the test: %s", gone.Process.Pid, r)
	}
	if !strings.Contains(r.String(), "free throughout") {
		t.Errorf("report: %s", r)
	}
}
