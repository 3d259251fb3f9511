package realcli

// Watching the pid a stale lock names while a CLI starts. The real CLI
// judges other holders by kill(pid, 0) alone, which succeeds for any process,
// zombie or thread that has the pid at that moment: a pid given out again
// while it starts makes it record alreadyInUse=true. On a machine shared with
// other test runs that happens whenever something rewinds
// /proc/sys/kernel/ns_last_pid (the engine's own pid-reuse tests do, to hand
// a dead CLI's pid to a new process) or the counter wraps at pid_max.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Occupant is a task seen with the watched pid.
type Occupant struct {
	PID   int    // the watched pid: a thread id when TGID differs
	TGID  int    // the process it belongs to
	Comm  string // its command name
	State byte   // R, S, D, Z (a zombie), ...
	Start uint64 // start time in clock ticks since boot: tells occupants apart
	Seen  time.Time
}

func (o Occupant) String() string {
	what := fmt.Sprintf("process %q", o.Comm)
	if o.TGID != o.PID {
		what = fmt.Sprintf("a thread %q of pid %d", o.Comm, o.TGID)
	}
	if o.State == 'Z' {
		what += " (a zombie)"
	}
	return fmt.Sprintf("%s, seen at %s", what, o.Seen.Format("15:04:05.000"))
}

// PIDReport is what a PIDWatch saw.
type PIDReport struct {
	PID       int
	Occupants []Occupant
	// Passed: the kernel's pid counter reached PID between two samples, so
	// it may have been given to a task that was gone by the next sample.
	Passed     bool
	From, To   int      // ns_last_pid when the watch began and ended
	Back       []string // the counter's backward moves (wraps, rewinds)
	CounterErr error    // ns_last_pid could not be read: nothing is known
	Samples    int
	MaxGap     time.Duration // the longest time between two samples
}

// Free reports whether the pid provably belonged to nobody during the watch.
func (r PIDReport) Free() bool { return len(r.Occupants) == 0 && !r.Passed && r.CounterErr == nil }

func (r PIDReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pid %d: ", r.PID)
	switch {
	case len(r.Occupants) > 0:
		for i, o := range r.Occupants {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(o.String())
		}
	case r.Passed:
		b.WriteString("not seen, but the pid counter passed it, so it may have been given to a short-lived task")
	default:
		b.WriteString("free throughout")
	}
	if r.CounterErr != nil {
		fmt.Fprintf(&b, "; the pid counter is unreadable (%v)", r.CounterErr)
	} else {
		fmt.Fprintf(&b, "; ns_last_pid %d -> %d", r.From, r.To)
		if len(r.Back) > 0 {
			fmt.Fprintf(&b, ", moved back %s", strings.Join(r.Back, ", "))
		}
	}
	fmt.Fprintf(&b, " (%d samples, at most %v apart)", r.Samples, r.MaxGap.Round(time.Millisecond))
	return b.String()
}

// PIDWatch samples one pid and the pid counter until stopped.
type PIDWatch struct {
	stop    chan struct{}
	done    chan struct{}
	stopped sync.Once
	mu      sync.Mutex
	r       PIDReport
}

// watchEvery is the sampling interval: a CLI starts in about 2 s.
const watchEvery = time.Millisecond

// WatchPID starts watching pid; onSeen, if not nil, is called (from the
// watching goroutine) for each new occupant as soon as it is seen.
func WatchPID(pid int, onSeen func(Occupant)) *PIDWatch {
	w := &PIDWatch{stop: make(chan struct{}), done: make(chan struct{}), r: PIDReport{PID: pid}}
	last, err := lastPID()
	w.r.From, w.r.To, w.r.CounterErr = last, last, err
	go w.run(onSeen)
	return w
}

// Stop ends the watch and reports; it may be called more than once.
func (w *PIDWatch) Stop() PIDReport {
	w.stopped.Do(func() { close(w.stop) })
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.r
}

func (w *PIDWatch) run(onSeen func(Occupant)) {
	defer close(w.done)
	prev := time.Now()
	for {
		w.sample(onSeen)
		select {
		case <-w.stop:
			w.sample(onSeen) // up to the moment of stopping
			return
		case <-time.After(watchEvery):
		}
		now := time.Now()
		w.mu.Lock()
		w.r.MaxGap = max(w.r.MaxGap, now.Sub(prev))
		w.mu.Unlock()
		prev = now
	}
}

func (w *PIDWatch) sample(onSeen func(Occupant)) {
	o, seen := Task(w.r.PID)
	last, err := lastPID()
	w.mu.Lock()
	r := &w.r
	r.Samples++
	if err == nil && r.CounterErr == nil {
		if counterPassed(r.To, last, r.PID) {
			r.Passed = true
		}
		if last < r.To {
			r.Back = append(r.Back, fmt.Sprintf("%d->%d at %s", r.To, last, time.Now().Format("15:04:05.000")))
		}
		r.To = last
	}
	isNew := seen && (len(r.Occupants) == 0 || r.Occupants[len(r.Occupants)-1].Start != o.Start)
	if isNew {
		r.Occupants = append(r.Occupants, o)
	}
	w.mu.Unlock()
	if isNew && onSeen != nil {
		onSeen(o)
	}
}

// counterPassed reports whether the pid counter, last seen at from and now
// at to, may have given out pid in between. It only moves forward, except
// when it wraps at pid_max or someone writes ns_last_pid: a backward move
// may have passed anything above from or up to to.
func counterPassed(from, to, pid int) bool {
	if to >= from {
		return from < pid && pid <= to
	}
	return pid > from || pid <= to
}

func lastPID() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/ns_last_pid")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Task reads the task that has pid now, a process or a thread (whose
// /proc/<tid> is not listed but can be opened).
func Task(pid int) (Occupant, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return Occupant{}, false
	}
	o := Occupant{PID: pid, TGID: pid, Seen: time.Now()}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Occupant{}, false
	}
	o.Comm = s[open+1 : end]
	f := strings.Fields(s[end+1:])
	if len(f) > 19 {
		o.State = f[0][0]
		o.Start, _ = strconv.ParseUint(f[19], 10, 64)
	}
	if st, err := os.ReadFile(dir + "/status"); err == nil {
		for _, line := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
				o.TGID, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
	}
	return o, true
}
