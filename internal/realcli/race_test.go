//go:build realcli && linux

package realcli_test

// reclaimStale racing the real CLI as it resumes a session holding a stale
// lock, iteration after iteration; a failing iteration prints its own logs.

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/realcli"
	"github.com/copilot-ide/sessionlocks/rpc"
)

var raceIterations = flag.Int("realcli.race", 20, "iterations of TestReclaimRacingResume")

// TestReclaimRacingResume: reclaimStale (and canResume), called over and over
// while a CLI resumes a session holding a stale lock, remove the stale lock at
// most, never the resuming CLI's, and never stop the CLI from locking.
//
// The CLI's own alreadyInUse must be false, where that can be asked of it:
// the CLI judges other holders by kill(pid, 0) alone, so if the stale lock's
// pid is given to another process or thread while it starts (the counter
// wraps; on a shared machine the engine's own tests rewind it), it says true
// whatever the sidecar does. Each iteration watches that pid and says in the
// log whether it held the CLI's answer against it.
func TestReclaimRacingResume(t *testing.T) {
	env, id, p, h := newSession(t)
	sc := startSidecar(t, env)
	stale := crashed(t, p, h)
	var sum raceSummary
	for i := range *raceIterations {
		stale = raceOnce(&iteration{t: t, i: i, env: env, sc: sc, logFrom: sc.logLen()}, id, stale, &sum)
	}
	t.Logf("%d iterations, %d reclaimStale calls; the stale lock was removed by the sidecar %d times and by the resuming CLI itself %d times; no live lock touched",
		*raceIterations, sum.reclaims, sum.bySidecar, *raceIterations-sum.bySidecar)
	t.Logf("alreadyInUse: checked in %d iterations; not held against the CLI in %d, where the stale lock's pid was given out again while it started",
		sum.checked, sum.excused)
}

type raceSummary struct{ reclaims, bySidecar, checked, excused int }

// staleLock is what a SIGKILLed CLI left, and the CLI itself (its pid and
// start), to tell it from a task that is given its pid later.
type staleLock struct {
	realcli.Holder
	cli realcli.Occupant
}

// crashed SIGKILLs a CLI (see killCLI) and returns what it left.
func crashed(t *testing.T, p *realcli.Proc, h realcli.Holder) staleLock {
	t.Helper()
	task, ok := realcli.Task(p.PID)
	if !ok {
		t.Fatalf("copilot pid %d is gone before it was killed", p.PID)
	}
	killCLI(t, p, h)
	return staleLock{Holder: h, cli: task}
}

// iteration is one round of the race: its failures name it, and print its
// CLI's output and log and the part of the sidecar's log written during it.
type iteration struct {
	t       *testing.T
	i       int
	env     *realcli.Env
	sc      *sidecar
	logFrom int
	cli     *realcli.Proc
	before  bool // the test had failed before this iteration

	mu     sync.Mutex
	failed bool
	said   []string // the sidecar's answers when the stale pid was seen taken
	asking sync.WaitGroup
}

func (it *iteration) errorf(format string, args ...any) {
	it.t.Helper()
	it.mu.Lock()
	it.failed = true
	it.mu.Unlock()
	it.t.Errorf("iteration %d: %s (iteration %d's logs follow)", it.i, fmt.Sprintf(format, args...), it.i)
}

func (it *iteration) fatalf(format string, args ...any) {
	it.t.Helper()
	it.errorf(format, args...)
	it.t.FailNow()
}

// showLogs, deferred, prints the iteration's logs if it failed (through
// errorf or a helper's t.Fatal).
func (it *iteration) showLogs() {
	it.mu.Lock()
	failed := it.failed || it.t.Failed() && !it.before
	it.mu.Unlock()
	if !failed {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "=== the logs of iteration %d ===\n", it.i)
	if it.cli != nil {
		fmt.Fprintf(&b, "--- copilot pid %d's output ---\n%s\n%s\n", it.cli.PID, headTail(it.cli.Output(), 40), cliLog(it.env, it.cli.PID))
	}
	b.WriteString(it.sc.logSince(it.logFrom, fmt.Sprintf("during iteration %d", it.i)))
	it.t.Log(b.String())
}

// askSidecar records the sidecar's judgement of the stale holder at the
// moment its pid was seen taken (called by the pid watcher).
func (it *iteration) askSidecar(id string, pid int, o realcli.Occupant) {
	it.asking.Add(1)
	go func() {
		defer it.asking.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var c rpc.CanResumeResult
		err := it.sc.conn.Call(ctx, "canResume", rpc.CanResumeParams{SessionID: id}, &c)
		h, ok := holderFor(c.Holders, pid)
		said := fmt.Sprintf("%s/%s: %s", h.Verdict, h.Reason, h.Detail)
		switch {
		case err != nil:
			said = fmt.Sprintf("canResume failed: %v", err)
		case !ok:
			said = "no such holder (its lock is gone)"
		}
		it.mu.Lock()
		it.said = append(it.said, fmt.Sprintf("when pid %d was %s, the sidecar said at %s: %s", pid, o, time.Now().Format("15:04:05.000"), said))
		it.mu.Unlock()
	}()
}

// raceOnce resumes the session with a new CLI while two reclaimers race it,
// checks what was left, and SIGKILLs that CLI, whose lock the next
// iteration races over.
func raceOnce(it *iteration, id string, stale staleLock, sum *raceSummary) staleLock {
	t, env := it.t, it.env
	it.before = t.Failed()
	defer it.showLogs()
	before := len(resumes(t, env.SessionDir(id)))
	// From before the CLI starts: it judges the locks it finds in its
	// first second or two, before it locks the session itself.
	watches := watchLocks(env.SessionDir(id), func(pid int, o realcli.Occupant) { it.askSidecar(id, pid, o) })
	defer stopAll(watches)
	next, err := env.Prompt("resume check", "--resume="+id)
	if err != nil {
		it.fatalf("%v", err)
	}
	t.Cleanup(next.Kill)
	it.cli = next
	task, _ := realcli.Task(next.PID)
	mine := realcli.HolderFiles(env.SessionDir(id), next.PID)

	results, timedOut := reclaimRace(it, id, next, mine)
	if timedOut || !mine.Complete() {
		var seen []string
		for _, r := range results {
			for _, hs := range [][]rpc.Holder{r.Reclaimed, r.Kept} {
				if hd, ok := holderFor(hs, next.PID); ok {
					seen = append(seen, fmt.Sprintf("%s/%s %s", hd.Verdict, hd.Reason, hd.Detail))
				}
			}
		}
		it.fatalf("copilot pid %d did not keep the session locked; what reclaimStale said of it (%d answers):\n  %s",
			next.PID, len(seen), strings.Join(uniq(seen), "\n  "))
	}
	ev, ok := waitResumeEvent(t, env, id, before)
	pids := stopAll(watches)
	it.asking.Wait()
	if !ok {
		it.fatalf("copilot pid %d locked the session but wrote no session.resume event", next.PID)
	}
	if stale.Exists() && !allFree(pids) {
		results = append(results, it.reclaimUntilGone(id, stale, pids)...)
	}
	if checkReclaims(it, results, next.PID, stale.PID) {
		sum.bySidecar++
	}
	sum.reclaims += len(results)
	if stale.Exists() && allFree(pids) {
		it.errorf("the stale lock of pid %d is still there, though nothing had its pid while the CLI started: %s", stale.PID, reports(pids))
	}
	if !mine.Complete() {
		it.fatalf("the resuming CLI's lock or hold is gone")
	}
	if done, _ := next.Exited(); done {
		it.fatalf("the resuming CLI exited")
	}
	judgeAlreadyInUse(it, ev, stale, pids, sum)

	killCLI(t, next, mine)
	return staleLock{Holder: mine, cli: task}
}

// checkReclaims fails the iteration if any reclaimStale answer touched the
// resuming CLI's lock, and reports whether one reclaimed the stale lock.
func checkReclaims(it *iteration, results []rpc.ReclaimStaleResult, resuming, stale int) (reclaimed bool) {
	for _, r := range results {
		if hd, ok := holderFor(r.Reclaimed, resuming); ok {
			it.fatalf("reclaimStale reclaimed the resuming CLI's lock: %s", mustJSON(hd))
		}
		for _, f := range r.Failed {
			if f.Holder.PID == resuming {
				it.fatalf("reclaimStale tried to remove the resuming CLI's lock: %s", mustJSON(f))
			}
			it.t.Logf("iteration %d: reclaim of pid %d failed (the CLI may have removed it first): %s", it.i, f.Holder.PID, f.Error)
		}
		if _, ok := holderFor(r.Reclaimed, stale); ok {
			reclaimed = true
		}
	}
	return reclaimed
}

// reclaimUntilGone reclaims the stale lock until it is gone. It is called
// when its pid was given out again while the CLI started: the CLI then
// keeps the lock (kill(pid, 0) succeeds), and the sidecar too while that
// pid's task runs and may be its writer; once that task has gone, or the
// sidecar can tell it is not the writer, the lock must go.
func (it *iteration) reclaimUntilGone(id string, stale staleLock, pids []realcli.PIDReport) []rpc.ReclaimStaleResult {
	it.t.Helper()
	var results []rpc.ReclaimStaleResult
	began := time.Now()
	var last string
	for stale.Exists() {
		if time.Since(began) > waitLong {
			it.errorf("the stale lock of pid %d is still there %v after the race (the sidecar keeps it: %s); while the CLI started, %s",
				stale.PID, waitLong, last, reports(pids))
			return results
		}
		var r rpc.ReclaimStaleResult
		it.sc.call("reclaimStale", rpc.ReclaimStaleParams{SessionIDs: []string{id}}, &r)
		results = append(results, r)
		if h, ok := holderFor(r.Kept, stale.PID); ok {
			last = fmt.Sprintf("%s/%s: %s", h.Verdict, h.Reason, h.Detail)
		}
		time.Sleep(250 * time.Millisecond)
	}
	it.t.Logf("iteration %d: the stale lock of pid %d outlived the race by %v, because while the CLI started %s (the sidecar kept it as %s)",
		it.i, stale.PID, time.Since(began).Round(time.Millisecond), reports(pids), last)
	return results
}

// reclaimRace runs two reclaimers, racing the CLI and each other, until the
// CLI's lock has been in place for a few more rounds.
func reclaimRace(it *iteration, id string, next *realcli.Proc, mine realcli.Holder) ([]rpc.ReclaimStaleResult, bool) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results []rpc.ReclaimStaleResult
	)
	conn := it.sc.conn
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	// Start at different points of the CLI's ~2 s start-up, so that
	// sometimes the sidecar removes the stale lock and sometimes the CLI does.
	time.Sleep(time.Duration(it.i%4) * time.Second)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			after := 0
			for ctx.Err() == nil && after < 5 {
				if done, _ := next.Exited(); done {
					return
				}
				// canResume too: the IDE asks it while a CLI starts, and
				// it probes afresh.
				var c rpc.CanResumeResult
				if err := conn.Call(ctx, "canResume", rpc.CanResumeParams{SessionID: id}, &c); err != nil {
					if ctx.Err() == nil {
						it.errorf("canResume: %v", err)
					}
					return
				}
				if h, ok := holderFor(c.Holders, next.PID); ok && (h.Verdict != rpc.VerdictLive || c.CanResume) {
					it.errorf("canResume while copilot pid %d resumes: %s", next.PID, mustJSON(c))
				}
				var r rpc.ReclaimStaleResult
				if err := conn.Call(ctx, "reclaimStale", rpc.ReclaimStaleParams{SessionIDs: []string{id}}, &r); err != nil {
					if ctx.Err() == nil {
						it.errorf("reclaimStale: %v", err)
					}
					return
				}
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
				if mine.Complete() {
					after++
				}
			}
		}()
	}
	wg.Wait()
	return results, ctx.Err() != nil
}

// judgeAlreadyInUse checks the CLI's own verdict where nothing had the pid
// of a lock it found while it started, and says in the log what it did.
func judgeAlreadyInUse(it *iteration, ev resumeEvent, stale staleLock, pids []realcli.PIDReport, sum *raceSummary) {
	if ev.Data.AlreadyInUse == nil {
		it.fatalf("session.resume event without alreadyInUse: the CLI's events changed")
	}
	for _, r := range pids {
		for _, o := range r.Occupants {
			if o.PID == stale.PID && o.TGID == o.PID && o.Start == stale.cli.Start {
				it.errorf("copilot pid %d, SIGKILLed before this iteration, was still there when the next CLI started (%s): the harness did not reap it", stale.PID, o)
			}
		}
	}
	it.mu.Lock()
	said := strings.Join(it.said, "; ")
	it.mu.Unlock()
	if said == "" {
		said = "not asked (no pid was seen taken)"
	}
	switch inUse := *ev.Data.AlreadyInUse; {
	case !inUse:
		sum.checked++
		it.t.Logf("iteration %d: alreadyInUse=false, checked; %s", it.i, reports(pids))
	case allFree(pids):
		sum.checked++
		it.errorf("the CLI resumed with alreadyInUse=true, %s", unexplained(pids))
	default:
		sum.excused++
		it.t.Logf("iteration %d: alreadyInUse=true, %s; the sidecar: %s", it.i, excused(pids), said)
	}
}

// uniq drops adjacent repeats.
func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}
