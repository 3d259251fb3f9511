package sessionlocks

// The names under which a removal sets a file aside before it checks and
// unlinks it (remove.go): they keep the file's own name and the remover's
// identity, so that after a crash the next run knows what the file was and
// whether anyone still works on it (recover.go).

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// asidePrefix begins every set-aside name; older builds wrote
// ".sessionlocks-removing-<hex>", which it also begins.
const asidePrefix = ".sessionlocks-"

// isAsideName reports whether a session directory's entry is a file a
// removal set aside (this build's or an older one's): never a holder.
func isAsideName(name string) bool {
	if strings.HasPrefix(name, asidePrefix+"removing-") {
		return true
	}
	return strings.HasPrefix(name, asidePrefix+"aside.") && !parseAside(name).unparsed
}

// aside is a set-aside file's name, parsed.
type aside struct {
	name     string    // the set-aside name
	orig     string    // the file's own name, inuse.<pid>.(lock|hold); "" for an older build's
	remover  int       // the removing process's pid; 0 for an older build's
	started  time.Time // when it started
	unparsed bool      // begins with asidePrefix but is no name this or an older build makes
}

// asideName is the name under which this process sets orig aside:
// ".sessionlocks-aside.<pid>.<start, Unix ms>.<orig>".
func asideName(orig string) string {
	me := self()
	return fmt.Sprintf("%saside.%d.%d.%s", asidePrefix, me.pid, me.start.UnixMilli(), orig)
}

// parseAside parses a set-aside name.
func parseAside(name string) aside {
	a := aside{name: name}
	if strings.HasPrefix(name, asidePrefix+"removing-") {
		return a // an older build's: nameless and ownerless
	}
	rest, ok := strings.CutPrefix(name, asidePrefix+"aside.")
	f := strings.SplitN(rest, ".", 3)
	if !ok || len(f) != 3 {
		a.unparsed = true
		return a
	}
	pid, err1 := strconv.Atoi(f[0])
	ms, err2 := strconv.ParseInt(f[1], 10, 64)
	if _, _, ok := parseLockName(f[2]); !ok || err1 != nil || err2 != nil || pid <= 0 {
		a.unparsed = true
		return a
	}
	a.orig, a.remover, a.started = f[2], pid, time.UnixMilli(ms)
	return a
}

// running reports whether the process that set a aside still runs. This
// process counts as not running: it recovers only under the session's
// mutex, when none of its own removals is under way.
func (a aside) running() bool {
	return a.remover != 0 && a.remover != self().pid && (identity{a.remover, a.started}).running()
}

// running reports whether the process id names still runs, the same one.
func (id identity) running() bool {
	start, err := ProcessStart(id.pid)
	return err == nil && SameStart(start, id.start)
}

// unlinked holds the set-aside files this process deleted that Windows
// still shows until another process's handle on them closes: finished
// work, not a removal to recover. Unix never adds one.
var unlinked sync.Map // path -> struct{}

func markUnlinked(path string) {
	unlinked.Store(path, struct{}{})
	n := 0
	unlinked.Range(func(k, _ any) bool { n++; return true })
	if n > 1024 {
		unlinked.Range(func(k, _ any) bool {
			if _, err := os.Lstat(k.(string)); err != nil {
				unlinked.Delete(k)
			}
			return true
		})
	}
}

// isUnlinked reports whether path is a set-aside file this process deleted.
func isUnlinked(path string) bool { _, ok := unlinked.Load(path); return ok }

// identity is a process's pid and start time.
type identity struct {
	pid   int
	start time.Time
}

var (
	selfOnce sync.Once
	selfID   identity
)

// self is this process's identity, read once.
func self() identity {
	selfOnce.Do(func() {
		selfID.pid = os.Getpid()
		selfID.start, _ = ProcessStart(selfID.pid)
	})
	return selfID
}
