package sessionlocks

// Terminate's promises on Linux: every signal preceded by proof (SIGKILL
// too), and a live holder that was not stopped never loses its files, also
// where no owner can be proven (as on macOS and Windows without their
// evidence: owner proof switched off).

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSIGKILLWithheldFromAnOwnerThatNoLongerHoldsTheSession(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "s")
	// On SIGTERM it exec's another program: the .hold closes with the exec,
	// and the pid runs on as something that holds no session.
	h := startHolder(t, sd, "s", "--exec-on-term", "sleep 600")
	pastSettle(t)
	res, err := newEngine(t, sd, settle).Force(context.Background(), "s", ForceOptions{Terminate: true, Kill: true, Grace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if p := readProc(h.pid); p.state != procAlive || len(p.argv) == 0 || p.argv[0] != "sleep" {
		t.Fatalf("pid %d is %v %v: the exec'd program must not have been killed", h.pid, p.state, p.argv)
	}
	if !slices.Equal(res.Signalled, []int{h.pid}) || len(res.Killed) != 0 {
		t.Errorf("signalled %v killed %v, want SIGTERM only", res.Signalled, res.Killed)
	}
	withheld := slices.ContainsFunc(res.NotSignalled, func(r Refusal) bool {
		return r.PID == h.pid && strings.HasPrefix(r.Why, "SIGKILL withheld")
	})
	if !withheld {
		t.Errorf("not signalled %+v, want the SIGKILL withheld, with why", res.NotSignalled)
	}
	// Its files were judged afresh: its .hold is free, but the pid runs on as
	// another program, older than the lock: unknown, and terminate keeps
	// what it did not stop.
	if res.Session.State != StateUnknown || !exists(filepath.Join(sd, "s", lockFileName(h.pid))) {
		t.Errorf("session %s after force; want it judged afresh (unknown) and its files kept", res.Session.State)
	}
}

func TestKillStillStopsAProvenOwnerThatIgnoresSIGTERM(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "s")
	h := startHolder(t, sd, "s", "--ignore-term")
	pastSettle(t)
	res, err := newEngine(t, sd, settle).Force(context.Background(), "s", ForceOptions{Terminate: true, Kill: true, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Killed, []int{h.pid}) || !slices.Equal(res.Exited, []int{h.pid}) || res.Session.State != StateFree {
		t.Fatalf("killed %v exited %v session %s: want the proven owner killed and its files removed", res.Killed, res.Exited, res.Session.State)
	}
}

func TestTerminateWithoutOwnerProofKeepsLiveHolders(t *testing.T) {
	sd := t.TempDir()
	newSession(t, sd, "s")
	h := startHolder(t, sd, "s")
	pastSettle(t)
	e := newEngine(t, sd, settle)
	e.noOwnerProof = true // as on a system where no process's descriptors can be read
	seen := mustSession(t, e, "s")
	if seen.Holders[0].Owner != nil || seen.Holders[0].NoOwner == "" {
		t.Fatalf("owner %+v with proof switched off", seen.Holders[0].Owner)
	}
	res, err := e.Force(context.Background(), "s", ForceOptions{Expect: seen.Token(), Terminate: true, Kill: true, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if readProc(h.pid).state != procAlive || len(res.Signalled) != 0 {
		t.Fatalf("signalled %v without proof", res.Signalled)
	}
	if len(res.Removed) != 0 || len(res.Kept) != 1 || res.Session.State != StateInUse {
		t.Fatalf("removed %d kept %d session %s: a running CLI must keep its files", len(res.Removed), len(res.Kept), res.Session.State)
	}
	if len(res.NotSignalled) != 1 || !strings.Contains(res.NotSignalled[0].Why, "no process is proven") {
		t.Errorf("not signalled %+v", res.NotSignalled)
	}
	for _, f := range []string{lockFileName(h.pid), holdFileName(h.pid)} {
		if !exists(filepath.Join(sd, "s", f)) {
			t.Errorf("%s was removed", f)
		}
	}
}
