package sessionlocks

// decide, row by row, as docs/judging.md's table states the rules: each row
// is the facts of one holder and the verdict that table gives it.

import (
	"errors"
	"io/fs"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	boot := now.Add(-24 * time.Hour)
	cliArgv := []string{"/usr/lib/node_modules/@github/copilot-linux-x64/copilot", "--resume"}
	reg := fileID{mode: 1, ino: 1}
	old := now.Add(-time.Hour)
	young := now.Add(-time.Second)
	// base is a holder whose lock was written an hour ago by a process that
	// is gone; each row changes what it needs.
	base := func(written time.Time) *facts {
		return &facts{pid: 42, lock: reg, written: written, age: now.Sub(written), settle: 5 * time.Second,
			tol: time.Second, cliTol: time.Minute, boot: boot, proc: procInfo{state: procGone}}
	}
	alive := func(start time.Time, argv ...string) procInfo {
		return procInfo{state: procAlive, start: start, argv: argv}
	}
	free, held := &holdProbe{}, &holdProbe{held: true}
	rows := []struct {
		name string
		set  func(f *facts)
		v    Verdict
		r    Reason
	}{
		{"a FIFO named like a lock", func(f *facts) { f.lock = fileID{mode: uint32(fs.ModeNamedPipe)} }, Unknown, ReasonUnprobeable},
		{"lock files that could not be examined", func(f *facts) { f.lock, f.statErr = fileID{}, fs.ErrPermission }, Unknown, ReasonUnprobeable},
		{"1: .hold held, seen in the holder's own descriptors", func(f *facts) { f.hold, f.holdSeen = reg, true }, Live, ReasonHoldLocked},
		{"1: .hold held, seen in the machine's lock table", func(f *facts) { f.hold, f.holdTable = reg, true }, Live, ReasonHoldLocked},
		{"1: .hold held, probed", func(f *facts) { f.hold, f.probe = reg, held }, Live, ReasonHoldLocked},
		{"1: .hold re-created while probed", func(f *facts) { f.hold, f.probe = reg, &holdProbe{changed: true} }, Live, ReasonStarting},
		{"1: .hold free, probed", func(f *facts) { f.hold, f.probe = reg, free }, Stale, ReasonHoldReleased},
		{"1: .hold free, orphan (no .lock)", func(f *facts) { f.lock, f.hold, f.probe = fileID{}, reg, free }, Stale, ReasonHoldReleased},
		{"1: .hold free on a shared file system", func(f *facts) { f.hold, f.probe, f.sharedFS = reg, free, "nfs" }, Unknown, ReasonUnprobeable},
		{"1: .hold free, written on another system", func(f *facts) { f.hold, f.probe, f.otherOS = reg, free, "linux" }, Unknown, ReasonUnprobeable},
		{"1: .hold free in a nested PID namespace (flock crosses them)", func(f *facts) { f.hold, f.probe, f.nestedNS = reg, free, true }, Stale, ReasonHoldReleased},
		{"1: .hold free, but its writer still runs: the pid decides", func(f *facts) {
			f.hold, f.probe, f.proc, f.cli = reg, free, alive(old.Add(-time.Minute), cliArgv...), true
		}, Live, ReasonVerified},
		{"1: .hold not probed (error): the pid decides", func(f *facts) { f.hold, f.probe = reg, &holdProbe{err: errors.New("EACCES")} }, Stale, ReasonProcessExited},
		{"1: young .hold, not probed, pid alive", func(f *facts) {
			*f = *base(young)
			f.hold, f.proc = reg, alive(young.Add(-time.Second), "sleep")
		}, Live, ReasonStarting},
		{"1: young .hold, not probed, pid could not be examined", func(f *facts) {
			*f = *base(young)
			f.hold, f.proc = reg, procInfo{state: procUnknown}
		}, Live, ReasonStarting},
		{"1: young .hold, not probed, pid runs nowhere: stale at once", func(f *facts) { *f = *base(young); f.hold = reg }, Stale, ReasonProcessExited},
		{"1: young .hold, pid runs nowhere here, but a nested sandbox sees nothing", func(f *facts) { *f = *base(young); f.hold, f.nestedNS = reg, true }, Live, ReasonStarting},
		{"1: young .hold, pid runs nowhere here, state dir shared", func(f *facts) { *f = *base(young); f.hold, f.sharedFS = reg, "9p" }, Live, ReasonStarting},
		{"1: young .hold, pid runs nowhere here, written on another system", func(f *facts) { *f = *base(young); f.hold, f.otherOS = reg, "windows" }, Live, ReasonStarting},
		{"1: young .hold, pid a CLI in another PID namespace", func(f *facts) {
			*f = *base(young)
			f.hold, f.ns = reg, &nsProc{pid: 900, cli: true}
		}, Live, ReasonStarting},
		{"2: written before the boot", func(f *facts) { *f = *base(boot.Add(-time.Hour)) }, Stale, ReasonPredatesBoot},
		{"2: before the boot, but its CLI runs (a clock was wrong)", func(f *facts) {
			*f = *base(boot.Add(-time.Hour))
			f.proc, f.cli = alive(boot.Add(-2*time.Hour), cliArgv...), true
		}, Live, ReasonVerified},
		{"3: no process has the pid", func(f *facts) {}, Stale, ReasonProcessExited},
		{"3: a zombie", func(f *facts) { f.proc = procInfo{state: procZombie} }, Stale, ReasonProcessExited},
		{"3: a thread's id", func(f *facts) { f.proc = procInfo{state: procThread, tgid: 7} }, Stale, ReasonProcessExited},
		{"3: gone, but pids prove nothing on a shared file system", func(f *facts) { f.sharedFS = "nfs" }, Unknown, ReasonUnprobeable},
		{"3: gone, but this sidecar is in a PID namespace of its own", func(f *facts) { f.nestedNS = true }, Unknown, ReasonUnprobeable},
		{"3: gone, but the session was written on another system", func(f *facts) { f.otherOS = "linux" }, Unknown, ReasonUnprobeable},
		{"3: gone here, a CLI in another PID namespace has the pid", func(f *facts) { f.ns = &nsProc{pid: 900, cli: true} }, Live, ReasonVerified},
		{"3: gone here, another process in another PID namespace has it", func(f *facts) { f.ns = &nsProc{pid: 900} }, Unknown, ReasonUnverified},
		{"4: started after the lock was written", func(f *facts) { f.proc = alive(old.Add(time.Minute), "sleep", "600") }, Stale, ReasonPIDReused},
		{"4: a CLI started within the clock tolerance after its lock", func(f *facts) {
			f.proc, f.cli = alive(old.Add(30*time.Second), cliArgv...), true
		}, Live, ReasonVerified},
		{"4: a CLI started beyond the clock tolerance", func(f *facts) {
			f.proc, f.cli = alive(old.Add(2*time.Minute), cliArgv...), true
		}, Stale, ReasonPIDReused},
		{"4: a lock dated in the future is no time evidence", func(f *facts) {
			*f = *base(now.Add(time.Hour))
			f.proc = alive(old, "sleep")
		}, Unknown, ReasonUnverified},
		{"5: young, its process alive", func(f *facts) { *f = *base(young); f.proc = alive(young.Add(-time.Second), "sleep") }, Live, ReasonStarting},
		{"5: young, its process could not be examined", func(f *facts) { *f = *base(young); f.proc = procInfo{state: procUnknown} }, Live, ReasonStarting},
		{"6: the CLI, older than its lock", func(f *facts) { f.proc, f.cli = alive(old.Add(-time.Minute), cliArgv...), true }, Live, ReasonVerified},
		{"7: alive, older, not the CLI", func(f *facts) { f.proc = alive(old.Add(-time.Minute), "sleep", "600") }, Unknown, ReasonUnverified},
		{"7: alive, its command line unreadable", func(f *facts) { f.proc = alive(old.Add(-time.Minute)) }, Unknown, ReasonUnprobeable},
		{"7: could not be examined", func(f *facts) { f.proc = procInfo{state: procUnknown} }, Unknown, ReasonUnprobeable},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			f := base(old)
			row.set(f)
			v, r := decide(f)
			if v != row.v || r != row.r {
				t.Errorf("decide = %s/%s, want %s/%s", v, r, row.v, row.r)
			}
			if d := detail(f, v, r); d == "" {
				t.Error("no sentence")
			}
		})
	}
}

func TestSharedFileSystemNames(t *testing.T) {
	for _, name := range []string{"nfs", "nfs4", "cifs", "smb3", "9p", "fuse", "fuse.sshfs", "virtiofs", "vboxsf", "prl_fs", "FUSE.grpcfuse"} {
		if !isSharedFS(name) {
			t.Errorf("%s: not taken for a file system other machines may write", name)
		}
	}
	for _, name := range []string{"ext4", "apfs", "ntfs", "tmpfs", "btrfs", ""} {
		if isSharedFS(name) {
			t.Errorf("%s: taken for a shared file system", name)
		}
	}
}
