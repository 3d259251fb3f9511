//go:build realcli && linux

package realcli_test

// The real CLI's alreadyInUse, and the pids it judged. It lists the
// session's inuse.<pid>.lock files and calls kill(pid, 0) on each, about
// 0.2 s before it locks the session (and deletes dead holders' locks): any
// task that has one of those pids then, a process, zombie or thread, makes it
// say true. So a test holds alreadyInUse=true against the CLI only where
// nothing had any of those pids while it started.

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/copilot-ide/sessionlocks/internal/realcli"
)

// watchLocks watches the pid of every lock in a session directory;
// onSeen, if not nil, is called when one is seen taken.
func watchLocks(dir string, onSeen func(pid int, o realcli.Occupant)) []*realcli.PIDWatch {
	names, _ := filepath.Glob(filepath.Join(dir, "inuse.*.lock"))
	var ws []*realcli.PIDWatch
	for _, n := range names {
		pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(n), "inuse."), ".lock"))
		if err != nil {
			continue
		}
		var seen func(realcli.Occupant)
		if onSeen != nil {
			seen = func(o realcli.Occupant) { onSeen(pid, o) }
		}
		ws = append(ws, realcli.WatchPID(pid, seen))
	}
	return ws
}

func stopAll(ws []*realcli.PIDWatch) []realcli.PIDReport {
	var rs []realcli.PIDReport
	for _, w := range ws {
		rs = append(rs, w.Stop())
	}
	return rs
}

func allFree(rs []realcli.PIDReport) bool {
	for _, r := range rs {
		if !r.Free() {
			return false
		}
	}
	return true
}

func reports(rs []realcli.PIDReport) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.String())
	}
	if len(out) == 0 {
		return "there was no lock to judge"
	}
	return strings.Join(out, "; ")
}

func unexplained(pids []realcli.PIDReport) string {
	return "yet nothing had the pid of a lock it found while it started, so nothing live was there: " + reports(pids)
}

func excused(pids []realcli.PIDReport) string {
	return "not held against the CLI: it judges other holders by kill(pid, 0) alone, and while it started " + reports(pids)
}

// wantNotInUse fails t if CLI p, which should have found nothing live
// (what says why), said alreadyInUse=true while nothing had the pid of a lock
// it found; where something had, that is the CLI's own misjudgement, and it
// is logged.
func wantNotInUse(t *testing.T, env *realcli.Env, p *realcli.Proc, what string, inUse bool, pids []realcli.PIDReport) {
	t.Helper()
	switch {
	case !inUse:
		t.Logf("copilot pid %d %s: alreadyInUse=false, checked; %s", p.PID, what, reports(pids))
	case allFree(pids):
		t.Errorf("copilot pid %d %s said alreadyInUse=true, %s; output:\n%s\n%s", p.PID, what, unexplained(pids), p.Output(), cliLog(env, p.PID))
	default:
		t.Logf("copilot pid %d %s: alreadyInUse=true, %s", p.PID, what, excused(pids))
	}
}
