package sessionlocks

// How far the state dir's file system stamps times from this machine's
// clock. A lock's mtime comes from the clock of whoever wrote the file (an
// NFS server's, say), a process's start time from ours: a CLI is taken for
// a reused pid only if it started later than both clocks can explain.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cliClockTolerance is how much later than its lock a process that looks
// like the CLI may seem to have started and still be its writer: a false
// "live" only costs a prompt.
const cliClockTolerance = 60 * time.Second

const skewTTL = 10 * time.Minute // how long a measured skew is reused

type skewCache struct {
	mu   sync.Mutex
	at   time.Time
	skew time.Duration
}

// cliTolerance is cliClockTolerance, or the state dir's measured skew if
// that is larger, measured only when a verdict depends on it, at most
// every skewTTL.
func (e *Engine) cliTolerance() time.Duration {
	c := &e.skew
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.at.IsZero() || now.Sub(c.at) > skewTTL {
		d, err := measureSkew(e.dir)
		if err != nil {
			e.log.Debug("cannot measure the state dir's clock skew", "err", err)
		}
		c.skew, c.at = d, now
	}
	return max(cliClockTolerance, c.skew)
}

// measureSkew creates a file in the state dir's operation-lock directory
// (if it exists) and compares its modification time with the local clock
// around its creation, inside the state dir as an os.Root (a link leading
// outside is refused). The file's name says who made it, so that one left
// by a process killed meanwhile is removed by the next measure.
func measureSkew(stateDir string) (time.Duration, error) {
	root, err := os.OpenRoot(stateDir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	var r [4]byte
	rand.Read(r[:])
	me := self()
	name := filepath.Join(opLockDir, fmt.Sprintf("%s%d.%d.%s", clockPrefix, me.pid, me.start.UnixMilli(), hex.EncodeToString(r[:])))
	defer clearClockFiles(root)
	before := time.Now()
	f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	after := time.Now()
	fi, err := f.Stat()
	f.Close()
	root.Remove(name)
	if err != nil {
		return 0, err
	}
	mid := before.Add(after.Sub(before) / 2)
	d := fi.ModTime().Sub(mid)
	if d < 0 {
		d = -d
	}
	return d, nil
}

// clockPrefix begins the name of the file measureSkew makes.
const clockPrefix = ".sessionlocks-clock."

// clearClockFiles removes the files measureSkew made whose maker no longer
// runs (older builds', named without their maker, once a minute old).
func clearClockFiles(root *os.Root) {
	d, err := root.Open(opLockDir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, n := range names {
		path := filepath.Join(opLockDir, n)
		if rest, ok := strings.CutPrefix(n, clockPrefix); ok {
			f := strings.SplitN(rest, ".", 3)
			pid, _ := strconv.Atoi(f[0])
			ms, _ := strconv.ParseInt(f[min(1, len(f)-1)], 10, 64)
			if len(f) == 3 && pid != self().pid && !(identity{pid, time.UnixMilli(ms)}).running() {
				root.Remove(path)
			}
		} else if strings.HasPrefix(n, ".sessionlocks-clock-") {
			if fi, err := root.Lstat(path); err == nil && time.Since(fi.ModTime()) > time.Minute {
				root.Remove(path)
			}
		}
	}
}
