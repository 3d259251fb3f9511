//go:build !linux

package sessionlocks

// Evidence from other processes' files where there is no /proc: who has a
// file open, from internal/procfiles (elsewhere nothing is proven). Nothing
// here shows a flock without touching the file: a young .hold is never
// seen held.

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/procfiles"
)

func holdsFile(pid int, name string, want fileID, flock bool) bool { return false }

func holderOf(name string, want fileID) int { return 0 }

func lockTableHolds(want fileID) bool { return false }

// hasOpen says whether pid has the file want (at path) open: with
// exclusive, as the only process that has it open, its lock held (the
// system never names who holds a lock). The error says why not.
func hasOpen(path string, want fileID, pid int, exclusive bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	name := filepath.Base(path)
	procs, unseen, err := procfiles.Openers(ctx, path, procfiles.FileID{Dev: want.dev, Ino: want.ino})
	if err != nil {
		return err
	}
	unseenNote := ""
	if unseen > 0 {
		unseenNote = fmt.Sprintf(" (%d processes could not be examined)", unseen)
	}
	if !slices.ContainsFunc(procs, func(p procfiles.Process) bool { return p.PID == pid }) {
		return fmt.Errorf("pid %d does not have %s open%s", pid, name, unseenNote)
	}
	if !exclusive {
		return nil
	}
	if len(procs) != 1 {
		var pids []int
		for _, p := range procs {
			pids = append(pids, p.PID)
		}
		return fmt.Errorf("pids %v have %s open: which one holds its lock cannot be told", pids, name)
	}
	// Asked after the system named who has it open: a probe's own handle
	// would otherwise be among them.
	if hp := probeHold(path, want); hp.err != nil || hp.changed || !hp.held {
		return fmt.Errorf("the lock on %s is not held now", name)
	}
	return nil
}
