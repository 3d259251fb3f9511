package sessionlocks

// Who started a live holder (its launcher, above the CLI's own loader), its
// controlling terminal, and whether it was left running after its launcher
// went (an orphan). These never change a verdict, nor license a signal.

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/procfiles"
)

// Launcher is the process that started a live holder (through its loader,
// if any).
type Launcher struct {
	PID       int
	Command   string // arguments joined by spaces
	Alive     bool   // false once it exited (a process that reused its pid is not it)
	StartedAt time.Time
}

// launchers remembers the launcher a holder had when first seen, so that
// its exit can be told after the holder was handed to another parent.
type launchers struct {
	mu sync.Mutex
	m  map[identity]Launcher // by the holder (its loader, if any)
}

// maxLaunchers bounds what is remembered; past it, exited holders are forgotten.
const maxLaunchers = 4096

func (l *launchers) recall(top identity) (Launcher, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	la, ok := l.m[top]
	return la, ok
}

func (l *launchers) remember(top identity, la Launcher) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[identity]Launcher{}
	}
	if len(l.m) >= maxLaunchers {
		for k := range l.m {
			if p := readProc(k.pid); p.state != procAlive || !SameStart(p.start, k.start) {
				delete(l.m, k)
			}
		}
	}
	l.m[top] = la
}

// attach fills in h's launcher, terminal and whether it is orphaned, from
// p (its named process): the CLI's own loader above it (which lives on
// when the IDE dies) counts as part of the holder.
func (e *Engine) attach(h *Holder, p procInfo) {
	if p.state != procAlive || p.ppid <= 0 {
		return
	}
	top, topInfo := identity{pid: h.PID, start: p.start}, p
	parent := readProc(p.ppid)
	if parent.state == procAlive && isLoader(parent.argv) && !parent.start.After(p.start.Add(ownerSlack)) {
		top, topInfo = identity{pid: p.ppid, start: parent.start}, parent
		parent = readProc(parent.ppid)
	}
	if !p.ttyKnown {
		// Read apart where the process record does not name it (macOS).
		p.tty, p.ttyKnown = terminalOf(h.PID)
	}
	h.Terminal = p.tty
	if h.Terminal == "" {
		h.Terminal = topInfo.tty
	}
	la, known := e.launchers.recall(top)
	var lost bool
	var why string
	switch {
	case known && la.PID == topInfo.ppid && parent.state == procAlive && SameStart(parent.start, la.StartedAt):
		// Its parent still, as when first seen and judged not lost.
		la.Alive = true
		h.Launcher = &la
	case known:
		lost, why = e.lostLauncher(top, topInfo, parent)
		if la.Alive = launcherAlive(la); !la.Alive {
			lost, why = true, fmt.Sprintf("its launcher, pid %d, has exited", la.PID)
		}
		h.Launcher = &la
	default:
		lost, why = e.lostLauncher(top, topInfo, parent)
	}
	if !known && !lost && topInfo.ppid > 0 && parent.state == procAlive {
		la := Launcher{PID: topInfo.ppid, Command: clip(strings.Join(parent.argv, " "), 80), Alive: true, StartedAt: parent.start}
		e.launchers.remember(top, la)
		h.Launcher = &la
	}
	orphaned := lost && (h.Terminal == "" || runtime.GOOS == "windows")
	if !p.ttyKnown && runtime.GOOS != "windows" {
		orphaned = false // whether a terminal is attached is not known: unsure is not orphaned
	}
	h.Orphaned = &orphaned
	h.Attachment = attachment(h, lost, why)
}

// lostLauncher says whether the holder (top, whose parent is parent now)
// has lost the process that started it, and why (docs/judging.md).
func (e *Engine) lostLauncher(top identity, info, parent procInfo) (bool, string) {
	switch {
	case parent.state == procGone || parent.state == procZombie:
		return true, fmt.Sprintf("its parent, pid %d, has exited", info.ppid)
	case parent.state != procAlive:
		return false, ""
	case info.ppid == 1 || isNamespaceInit(info.ppid):
		return true, fmt.Sprintf("it was handed to pid %d (%s), the init of its PID namespace", info.ppid, describe(parent))
	case parent.start.After(top.start.Add(ownerSlack)):
		return true, fmt.Sprintf("its parent, pid %d (%s), started after it, so did not start it", info.ppid, describe(parent))
	case isServiceManager(parent.argv) && !startedAsService(top.pid):
		return true, fmt.Sprintf("it was handed to pid %d (%s), a service manager that did not start it", info.ppid, describe(parent))
	}
	return false, ""
}

// launcherAlive reports whether la is still the process it was.
func launcherAlive(la Launcher) bool {
	p := readProc(la.PID)
	return p.state == procAlive && SameStart(p.start, la.StartedAt)
}

// attachment is the sentence explain shows: who started the holder, where
// it runs, and why it is or is not taken for an orphan.
func attachment(h *Holder, lost bool, why string) string {
	var b strings.Builder
	switch la := h.Launcher; {
	case la != nil && la.Alive:
		fmt.Fprintf(&b, "Started by pid %d (%s), which still runs", la.PID, la.Command)
	case la != nil:
		fmt.Fprintf(&b, "Started by pid %d (%s), which has exited", la.PID, la.Command)
	default:
		b.WriteString("Who started it is not known")
	}
	if h.Terminal != "" {
		fmt.Fprintf(&b, "; its terminal is %s", h.Terminal)
	} else {
		b.WriteString("; it has no terminal")
	}
	switch {
	case *h.Orphaned:
		fmt.Fprintf(&b, ". Left running after its launcher went (%s), and nobody is attached.", why)
	case lost:
		fmt.Fprintf(&b, ". Its launcher went (%s), but it is not taken for an orphan: %s.", why, notOrphanWhy(h))
	default:
		b.WriteString(".")
	}
	return b.String()
}

func notOrphanWhy(h *Holder) string {
	if h.Terminal != "" {
		return "a terminal is still attached to it"
	}
	return "whether a terminal is attached could not be read"
}

// terminalOf names pid's controlling terminal where the process record
// does not (macOS); ok is false where it cannot be read.
func terminalOf(pid int) (string, bool) {
	name, err := procfiles.Terminal(pid)
	return name, err == nil
}

// isLoader reports whether argv is the CLI's own launcher of its native
// binary: npm's `node …/@github/copilot/npm-loader.js`, or copilot.cmd.
func isLoader(argv []string) bool {
	return len(argv) > 0 && slices.ContainsFunc(argv[1:], func(a string) bool {
		s := slash(a)
		return strings.HasSuffix(s, "/@github/copilot/npm-loader.js") || strings.HasSuffix(strings.ToLower(s), "/copilot.cmd")
	})
}

// isServiceManager reports whether argv is a per-user service manager that
// adopts orphans: `systemd --user` on Linux.
func isServiceManager(argv []string) bool {
	return len(argv) >= 2 && baseName(argv[0]) == "systemd" && argv[1] == "--user"
}

// startedAsService reports whether pid runs as a service of the service
// manager (its cgroup is a .service), not one it merely adopted.
func startedAsService(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return true // not known: not taken for adopted
	}
	for line := range strings.Lines(string(b)) {
		if path, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			return strings.HasSuffix(path, ".service")
		}
	}
	return true
}
