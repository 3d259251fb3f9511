package sessionlocks

// Recovering from a removal a crash interrupted. A sidecar killed between
// setting a file aside and unlinking it (remove.go) leaves a file no CLI
// and no listing sees: a live CLI's lock there would leave its session
// reading free for good. So a session read with a set-aside file is
// recovered first, under its operation lock: each file whose remover no
// longer runs is put back under its own name (never over a file that took
// the name), judged, and removed only if stale. docs/judging.md has the
// table of steps.

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
)

// recoverSession recovers session id, taking its operation lock unless
// how.opLocked; a dry run's only puts back. It returns the removers whose
// work it left alone, still running.
func (e *Engine) recoverSession(ctx context.Context, id string, how scan) (waiting []identity, err error) {
	if !how.opLocked {
		release, err := e.lockSession(ctx, id)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	rm := openDirStat(filepath.Join(e.dir, id))
	defer rm.close()
	names, err := rm.names()
	if err != nil {
		return nil, err
	}
	restored := map[int]bool{}
	for _, n := range names {
		a := parseAside(n)
		switch {
		case !isAsideName(n) || isUnlinked(filepath.Join(rm.dir, n)):
		case a.running():
			waiting = append(waiting, identity{a.remover, a.started})
		default:
			if pid := e.recoverAside(id, rm, a, how.dryRun); pid > 0 {
				restored[pid] = true
			}
		}
	}
	if len(restored) == 0 || how.dryRun {
		return waiting, nil
	}
	// What was put back is judged like any holder: stale, it goes again.
	_, err = e.judgeSession(ctx, id, scan{decision: true, opLocked: true, recovering: true}, func(h Holder) {
		if h.Verdict != Stale || !restored[h.PID] {
			return
		}
		if err := removeStale(h, rm); err != nil {
			e.log.Warn("a file put back by recovery is stale but could not be removed", "session", id, "pid", h.PID, "err", err)
			return
		}
		e.log.Info("recovered: removed a stale lock an interrupted removal had set aside", "session", id, "pid", h.PID, "reason", h.Reason)
	})
	return waiting, err
}

// recoverAside puts a set-aside file back under its own name, or removes
// it where a newer file took that name; it returns the pid of a holder put
// back, 0 otherwise.
func (e *Engine) recoverAside(id string, rm dirStat, a aside, dryRun bool) int {
	orig := a.orig
	if orig == "" {
		orig = e.nameOfNameless(rm, a.name, dryRun)
		if orig == "" {
			return 0
		}
	}
	pid, kind, _ := parseLockName(orig)
	log := e.log.With("session", id, "file", a.name, "name", orig)
	err := rm.restore(a.name, orig)
	if err == nil {
		log.Info("recovered: put back a file an interrupted removal had set aside")
		return pid
	}
	if !errors.Is(err, fs.ErrExist) {
		log.Warn("cannot put back a set-aside file", "err", err)
		return 0
	}
	if dryRun {
		return 0
	}
	// A newer file has the name: an older .lock says nothing the newer does
	// not; an older .hold goes unless a process still holds its flock.
	if kind == "hold" {
		f, err := rm.lockHold(a.name, fileID{})
		if err != nil {
			log.Warn("kept a set-aside .hold whose name another file took: its lock is held or it cannot be examined", "err", err)
			return 0
		}
		defer f.Close()
	}
	if err := rm.unlink(a.name); err != nil {
		log.Warn("cannot remove a set-aside file whose name another file took", "err", err)
	} else {
		log.Info("recovered: removed a set-aside file whose name a newer file took")
	}
	return 0
}

// nameOfNameless finds the name of a file an older build set aside
// without it: a .lock's content names its pid; an empty file is a .hold,
// named after the process that holds its flock. An unheld one is stale and
// removed here; "" is returned for what cannot be put back.
func (e *Engine) nameOfNameless(rm dirStat, name string, dryRun bool) string {
	log := e.log.With("dir", rm.dir, "file", name)
	b, id, err := readRegular(filepath.Join(rm.dir, name), 64)
	if err != nil {
		log.Warn("cannot read a set-aside file", "err", err)
		return ""
	}
	if pid, err := strconv.Atoi(string(bytes.TrimSpace(b))); err == nil && pid > 0 && len(b) > 0 {
		return lockFileName(pid)
	}
	f, err := rm.lockHold(name, id)
	if err != nil {
		if pid := holderOf(name, id); pid > 0 {
			return holdFileName(pid)
		}
		log.Warn("kept a set-aside file whose kernel lock a process holds, which could not be found", "err", err)
		return ""
	}
	defer f.Close()
	if dryRun {
		return ""
	}
	if err := rm.unlink(name); err != nil {
		log.Warn("cannot remove a stale set-aside file", "err", err)
	} else {
		log.Info("recovered: removed a stale file an older build had set aside")
	}
	return ""
}
