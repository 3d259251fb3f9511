package watch

// Reading fsnotify's events: a goroutine of its own drains them into a set
// of dirty sessions the loop takes. It never calls Add or Remove, nor waits
// for the loop: on Windows fsnotify serves them on the goroutine that
// delivers its events (fsnotify #656).

import (
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// pending is what the reader saw since the loop last took it: one entry
// per session, however many events.
type pending struct {
	dir  string        // the state dir, cleaned
	wake chan struct{} // signalled (never blocking) when something was added

	mu     sync.Mutex
	ids    map[string]bool // dirty sessions; true: the session dir itself came or went
	rescan bool            // events were lost, or the state dir came or went
	events uint64          // events read
}

// read drains fsw until it is closed.
func (p *pending) read(fsw *fsnotify.Watcher, log *slog.Logger, hook func()) {
	for {
		select {
		case ev, ok := <-fsw.Events:
			if !ok {
				return
			}
			if hook != nil {
				hook()
			}
			p.add(ev)
		case err, ok := <-fsw.Errors:
			if !ok {
				return
			}
			if hook != nil {
				hook()
			}
			// An overflow lost events; any other error may have too.
			log.Warn("file events lost; listing every session", "err", err)
			p.mu.Lock()
			p.rescan = true
			p.mu.Unlock()
			p.signal()
		}
	}
}

// add marks what ev can have changed.
func (p *pending) add(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events++
	switch {
	case name == p.dir:
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			p.rescan = true
		}
	default:
		parent, base := filepath.Split(name)
		parent = filepath.Clean(parent)
		switch {
		case parent == p.dir && isSessionName(base):
			if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				p.ids[base] = true
			}
		case filepath.Dir(parent) == p.dir && isSessionName(filepath.Base(parent)) && relevantFile(base):
			if id := filepath.Base(parent); !p.ids[id] {
				p.ids[id] = false
			}
		default:
			return
		}
	}
	p.signal()
}

func (p *pending) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// take returns what was added since the last take and empties it.
func (p *pending) take() (ids map[string]bool, rescan bool, events uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids, rescan, events = p.ids, p.rescan, p.events
	p.ids, p.rescan, p.events = map[string]bool{}, false, 0
	return ids, rescan, events
}

// isSessionName tells a session directory's name from the state dir's
// other entries.
func isSessionName(name string) bool {
	return !strings.HasPrefix(name, ".") && sessionlocks.ValidateID(name) == nil
}

// relevantFile reports whether a file in a session dir can change what the
// engine says of the session (events.jsonl, appended all the time, cannot).
func relevantFile(name string) bool {
	return name == "workspace.yaml" || strings.HasPrefix(name, "inuse.")
}
