package watch

// Notify mode: routing fsnotify events and errors to the sessions they
// concern, adding and removing the watches on the state dir and the session
// dirs (or, while the state dir is missing, on its nearest ancestor), and
// falling back to polling when the kernel gives no more watches.

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsnotify/fsnotify"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// isSessionName tells a session directory's name from the other entries of
// the state dir (.session-operation-locks and the like).
func isSessionName(name string) bool {
	return !strings.HasPrefix(name, ".") && sessionlocks.ValidateID(name) == nil
}

// relevantFile reports whether a file inside a session directory can change
// what the engine says about the session. events.jsonl, which a running CLI
// appends to constantly, cannot.
func relevantFile(name string) bool {
	return name == "workspace.yaml" || strings.HasPrefix(name, "inuse.")
}

func (l *loop) handleEvent(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	if !l.dirOn {
		// Waiting on an ancestor (often the home directory, which sees a
		// lot of traffic): only its child on the way to the state dir, or
		// the ancestor itself going away, matters.
		if name == l.anchor || name == pathToward(l.anchor, l.dir) {
			l.rescan = true
		}
		return
	}
	if name == l.dir {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			l.rescan = true
			l.caches.InvalidateAll()
			l.updateTrust()
		}
		return
	}
	// What the engine knows of a session is dropped the moment an event
	// says it changed, not when the debounced re-read comes: a watched
	// engine (see updateTrust) serves listings from its snapshots until
	// told otherwise.
	parent, base := filepath.Split(name)
	parent = filepath.Clean(parent)
	switch {
	case parent == l.dir:
		if !isSessionName(base) || !(ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
			return
		}
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			l.unwatchSession(base)
		}
		if ev.Has(fsnotify.Create) && l.w.mode == ModeNotify {
			// Watch before the session is read, so nothing written after the
			// read goes unseen.
			l.watchSession(base)
		}
		l.caches.InvalidateSession(base)
		l.markDirty(base, true)
	case filepath.Dir(parent) == l.dir:
		id := filepath.Base(parent)
		if isSessionName(id) && relevantFile(base) {
			l.caches.InvalidateSessionFiles(id)
			l.markDirty(id, false)
		}
	}
}

func (l *loop) handleError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		l.w.log.Warn("file event queue overflowed; rescanning every session")
		// Events were lost: nothing cached may be trusted until the rescan.
		l.rescan = true
		l.caches.InvalidateAll()
		l.updateTrust()
		return
	}
	l.w.log.Warn("file watch error", "err", err)
}

// watchStateDir watches the state dir, or while it does not exist its nearest
// existing ancestor, and sets l.dirOn.
func (l *loop) watchStateDir() {
	if l.statePolled() {
		if l.fsw != nil {
			// Nothing of fsnotify's may remain on the state dir or an
			// ancestor: on kqueue that is a descriptor per entry.
			if l.dirOn {
				l.fsw.Remove(l.dir)
			}
			if l.anchor != "" {
				l.fsw.Remove(l.anchor)
				l.anchor = ""
			}
		}
		mt, ok := dirMtime(l.dir)
		l.dirOn, l.dirMt = ok, mt
		return
	}
	for range 4 { // the tree may change under us; a few tries settle it
		if l.present() {
			// Add is idempotent for the same directory and watches again a
			// directory that was removed and created again.
			if err := l.fsw.Add(l.dir); err == nil {
				if l.anchor != "" {
					l.fsw.Remove(l.anchor)
					l.anchor = ""
				}
				if !l.dirOn {
					l.w.log.Info("watching the state directory", "dir", l.dir, "mode", l.w.mode)
				}
				l.dirOn = true
				return
			} else if outOfWatches(err) {
				l.dropNotify(err)
				l.watchStateDir()
				return
			} else if !errors.Is(err, os.ErrNotExist) {
				l.w.log.Warn("cannot watch the state directory", "dir", l.dir, "err", err)
			}
		}
		if l.dirOn {
			l.fsw.Remove(l.dir)
			l.dirOn = false
			for id := range l.watched {
				l.unwatchSession(id)
			}
		}
		anc := nearestAncestor(l.dir)
		if anc == l.anchor {
			return
		}
		if l.anchor != "" {
			l.fsw.Remove(l.anchor)
			l.anchor = ""
		}
		if anc == "" {
			return
		}
		err := l.fsw.Add(anc)
		if outOfWatches(err) {
			l.dropNotify(err)
			l.watchStateDir()
			return
		}
		if err == nil {
			l.anchor = anc
			l.w.log.Info("state directory does not exist yet; watching its nearest ancestor", "dir", l.dir, "ancestor", anc)
			if !l.present() {
				return
			}
			// It appeared between the check and the watch: go round again.
		}
	}
}

// pathToward is the child of ancestor on the way down to dir.
func pathToward(ancestor, dir string) string {
	for {
		parent := filepath.Dir(dir)
		if parent == ancestor || parent == dir {
			return dir
		}
		dir = parent
	}
}

// nearestAncestor is the closest existing directory above dir, or "".
func nearestAncestor(dir string) string {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// watchSession adds an fsnotify watch on a session directory. Running out of
// inotify watches (ENOSPC) or descriptors (EMFILE) switches to poll mode.
func (l *loop) watchSession(id string) {
	if l.fsw == nil || l.watched[id] {
		return
	}
	// Checked just before the watch is added, not trusted from the state
	// dir's listing: a name swapped for a symlink meanwhile would put the
	// watch on another directory (inotify follows links), perhaps one
	// already watched under its own name.
	path := filepath.Join(l.dir, id)
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		return // gone, or a symlink the engine does not follow either
	}
	add := l.fsw.Add
	if l.w.testHookAdd != nil {
		add = l.w.testHookAdd
	}
	err := add(path)
	switch {
	case err == nil:
		l.watched[id] = true
	case outOfWatches(err):
		if l.w.mode == ModeNotify {
			l.w.log.Warn("out of file watches; falling back to poll mode (raise fs.inotify.max_user_watches to avoid this)",
				"err", err, "watched", len(l.watched))
			l.degrade("the watch limit was reached (" + err.Error() + "); polling directory mtimes instead")
		}
	case errors.Is(err, os.ErrNotExist):
	default:
		l.w.log.Warn("cannot watch a session directory", "dir", path, "err", err)
		l.unwatched++
		l.updateTrust()
	}
}

// outOfWatches reports whether err means the kernel will give no more
// watches: inotify's max_user_watches (ENOSPC), or descriptors (EMFILE).
func outOfWatches(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE)
}

// dropNotify gives up fsnotify entirely (it cannot even watch the state
// dir): everything, the state dir included, is polled from now on.
func (l *loop) dropNotify(err error) {
	l.w.log.Warn("out of file watches even for the state directory; polling everything", "err", err)
	l.fsw.Close()
	l.fsw = nil
	l.anchor = ""
	clear(l.watched)
	l.degrade("no file watch could be added (" + err.Error() + "); polling directory mtimes instead")
}

// degrade switches to poll mode: only the state dir and locked sessions stay
// watched, the rest is found by mtime after a full rescan.
func (l *loop) degrade(note string) {
	l.note = note
	if l.w.mode == ModePoll {
		return
	}
	l.w.mode = ModePoll
	l.updateTrust()
	for id := range l.watched {
		if !hasHolders(l.last[id]) {
			l.unwatchSession(id)
		}
	}
	l.rescan = true
}

func (l *loop) unwatchSession(id string) {
	if !l.watched[id] {
		return
	}
	delete(l.watched, id)
	if l.fsw != nil {
		// The kernel drops the watch of a removed directory by itself;
		// the error for that case means nothing.
		l.fsw.Remove(filepath.Join(l.dir, id))
	}
}
