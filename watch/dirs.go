package watch

// Notify mode's watches: fsnotify on the state dir and every session dir,
// the check that the state dir is still the one watched, and the fall back.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// windowsBuffer is the change buffer of each directory watched on Windows:
// fsnotify's default, 64 KiB, is 64 MiB at 1,000 sessions, and an overflow
// only costs a rescan.
const windowsBuffer = 4096

// dirs is fsnotify and what it watches. Only the loop calls its methods;
// the events are read by pending.read on a goroutine of its own.
type dirs struct {
	dir     string
	fsw     *fsnotify.Watcher
	pending *pending
	read    chan struct{}      // closed when the reader has returned
	add     func(string) error // adds a session dir's watch

	state   os.FileInfo     // the state dir as watched; nil while it is missing
	watched map[string]bool // session ids whose directory is watched
}

func startDirs(w *Watcher) (*dirs, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	d := &dirs{
		dir:     filepath.Clean(w.dir),
		fsw:     fsw,
		read:    make(chan struct{}),
		watched: map[string]bool{},
	}
	d.pending = &pending{dir: d.dir, wake: make(chan struct{}, 1), ids: map[string]bool{}}
	d.add = func(path string) error { return fsw.AddWith(path, fsnotify.WithBufferSize(windowsBuffer)) }
	if w.testHookAdd != nil {
		d.add = w.testHookAdd
	}
	go func() {
		defer close(d.read)
		d.pending.read(fsw, w.log, w.testHookEvent)
	}()
	return d, nil
}

func (d *dirs) close() {
	d.fsw.Close()
	<-d.read
}

func (d *dirs) count() int {
	n := len(d.watched)
	if d.state != nil {
		n++
	}
	return n
}

// watchAll watches the state dir and every session dir in it, and forgets
// the watches of session dirs gone; an error means one could not be added.
func (d *dirs) watchAll() error {
	if err := d.watchState(); err != nil || d.state == nil {
		return err
	}
	ents, err := os.ReadDir(d.dir)
	if err != nil {
		return nil // the listing that follows says why
	}
	seen := make(map[string]bool, len(ents))
	for _, de := range ents {
		if id := de.Name(); de.IsDir() && isSessionName(id) {
			seen[id] = true
			if _, err := d.watchSession(id); err != nil {
				return err
			}
		}
	}
	for id := range d.watched {
		if !seen[id] {
			d.unwatch(id)
		}
	}
	return nil
}

// watchState watches the state dir if it is there. A state dir that is
// another directory than the one watched (moved aside and recreated, a
// symlink retargeted) has every session watch dropped. While it is missing
// nothing is watched: the tick notices it appear (see replaced).
func (d *dirs) watchState() error {
	fi, ok := statDir(d.dir)
	if d.state != nil && (!ok || !os.SameFile(d.state, fi)) {
		for id := range d.watched {
			d.unwatch(id)
		}
		d.fsw.Remove(d.dir) // the old directory's watch
		d.state = nil
	}
	if !ok {
		return nil
	}
	if err := d.fsw.AddWith(d.dir, fsnotify.WithBufferSize(windowsBuffer)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone meanwhile
		}
		return err
	}
	d.state = fi
	return nil
}

// watchSession watches session id's directory if it is one (again when
// watched: it may have been made again), and reports whether it is.
func (d *dirs) watchSession(id string) (present bool, err error) {
	path := filepath.Join(d.dir, id)
	// inotify follows symlinks; the engine takes none for a session.
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		d.unwatch(id)
		return false, nil
	}
	if err := d.add(path); err != nil {
		if fi, serr := os.Lstat(path); errors.Is(err, fs.ErrNotExist) || serr != nil || !fi.IsDir() {
			d.unwatch(id)
			return false, nil // gone meanwhile
		}
		return true, err
	}
	d.watched[id] = true
	return true, nil
}

func (d *dirs) unwatch(id string) {
	if d.watched[id] {
		delete(d.watched, id)
		d.fsw.Remove(filepath.Join(d.dir, id)) // fails if the kernel dropped it already
	}
}

// replaced reports whether the state dir came, went, or is another
// directory than the one watched since the last watchAll.
func (d *dirs) replaced() bool {
	fi, ok := statDir(d.dir)
	if !ok {
		return d.state != nil
	}
	return d.state == nil || !os.SameFile(d.state, fi)
}

// statDir stats path, following symlinks, if it is a directory. Its
// identity is read at once (on Windows os.SameFile reads it lazily).
func statDir(path string) (os.FileInfo, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return nil, false
	}
	os.SameFile(fi, fi)
	return fi, true
}

// fallBack gives up file events for poll mode: a watch could not be added
// (the kernel's watch limit, most likely).
func (l *loop) fallBack(err error) {
	l.w.log.Warn("a directory cannot be watched; polling instead (raise fs.inotify.max_user_watches if the limit was reached)",
		"err", err, "interval", l.w.interval)
	if l.files != nil {
		l.files.close()
		l.files = nil
	}
	l.mode = ModePoll
	l.note = "a directory could not be watched (" + err.Error() + "); polling instead"
	if l.tick != nil {
		l.tick.Reset(l.tickEvery())
	}
}
