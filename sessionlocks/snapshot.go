package sessionlocks

// Directory snapshots made and refreshed: what one read of a session
// directory keeps (its lock files, workspace.yaml's metadata) for the next.

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// snapshotOf makes the snapshot of a session directory just read.
// prev is the metadata read last time, kept if workspace.yaml is caught
// mid-rewrite.
func (e *Engine) snapshotOf(dir string, sd sessionDir, now time.Time, prev metadata) dirSnapshot {
	snap := dirSnapshot{path: dir, dir: sd.id, readAt: now, metaAt: now, metaRead: now.UnixNano(), meta: prev}
	snap.files = sd.files
	snap.huge = countHolders(snap.files) > maxListedHolders
	if sd.hasMeta {
		e.applyMeta(&snap, dir, sd.meta, sd.metaID, sd.metaErr)
	} else {
		snap.meta = metadata{}
	}
	return snap
}

// refreshMeta reads workspace.yaml again if it changed since snap read it.
func (e *Engine) refreshMeta(dir string, snap *dirSnapshot, now time.Time) {
	snap.metaAt = now
	path := dir + string(os.PathSeparator) + "workspace.yaml"
	if snap.metaID.exists() && time.Unix(0, snap.metaRead).Sub(snap.metaID.modTime()) >= racyWindow {
		if id, err := lstatID(path); err == nil && id == snap.metaID {
			return
		}
	}
	b, id, err := readRegular(path, maxWorkspaceYAML)
	snap.metaRead = now.UnixNano()
	e.applyMeta(snap, dir, b, id, err)
}

// applyMeta parses workspace.yaml's bytes b (read with identity id, or
// failing with readErr) into snap.
func (e *Engine) applyMeta(snap *dirSnapshot, dir string, b []byte, id fileID, readErr error) {
	m, err := metadata{}, readErr
	if err == nil {
		m, err = parseMetadata(b)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.log.Debug("workspace.yaml unreadable", "dir", dir, "err", err)
	}
	if (err != nil && !errors.Is(err, fs.ErrNotExist) || id.exists() && id.size == 0) && snap.meta != (metadata{}) {
		// Caught mid-rewrite (the CLI truncates and rewrites it in place):
		// keep what it said before, and read it again next time.
		snap.metaID = fileID{}
		return
	}
	snap.meta, snap.metaID = m, id
}
