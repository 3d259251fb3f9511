package main

// `repl --demo`: a throwaway state dir with one session of every verdict, made
// of real processes, files and flocks. The CLI is this binary's `_fakecli`,
// run from where npm puts the real CLI, so that it is recognised as the CLI.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/repl"
	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

type demo struct {
	root, stateDir string
	cli            string      // the fake CLI's path: this binary where npm puts the real one
	holders        []*exec.Cmd // fake CLIs still running
	lines          []string    // what was set up, for the banner
}

type demoSession struct {
	id, name, project string
	age               time.Duration // since the last update
}

// The demo's sessions. Fixed ids, so that `canResume 5e55` works as the
// README says it does.
var demoSessions = []demoSession{
	{"5e55c0de-7a1e-4b1d-9c3a-1f2e3d4c5b6a", "Fix the flaky upload test", "uploader", 2 * time.Minute},
	{"dead0b0e-4c1e-4f2a-8b3d-6e5f4a3b2c1d", "Add retries to the fetcher", "fetcher", 20 * time.Minute},
	{"0bad91d5-2e3f-4a5b-9c6d-7e8f9a0b1c2d", "Bump dependencies", "website", 3 * time.Hour},
	{"c0ffee00-1b2c-4d3e-8f4a-5b6c7d8e9f0a", "Write the release notes", "website", 26 * time.Hour},
	{"c0deba5e-9f8e-4d7c-a6b5-4c3d2e1f0a9b", "Rename the config loader", "config", 50 * time.Hour},
}

// startDemo builds the demo state dir; exe is this binary.
func startDemo(exe string) (d *demo, err error) {
	root, err := os.MkdirTemp("", "sessionlocks-demo-")
	if err != nil {
		return nil, err
	}
	d = &demo{root: root, stateDir: filepath.Join(root, "session-state")}
	defer func() {
		if err != nil {
			d.cleanup()
		}
	}()
	if d.cli, err = placeCLI(exe, root); err != nil {
		return d, err
	}
	now := time.Now()
	for _, s := range demoSessions {
		if err := writeWorkspace(d.stateDir, s.id, s.name, demoCWD(s.project), now.Add(-s.age-time.Hour), now.Add(-s.age)); err != nil {
			return d, err
		}
	}
	if err := errors.Join(d.holder(now, demoSessions[0], false), d.holder(now, demoSessions[1], true), d.reused(), d.unverified(now)); err != nil {
		return d, err
	}
	d.note(demoSessions[4].id, "free", "no lock files")
	return d, nil
}

// placeCLI puts exe where npm puts the CLI's native binary
// (node_modules/@github/copilot-<os>-<arch>/copilot), as a hard link or
// else a copy, and returns that path. On Windows always a copy: a link to
// the running REPL's own image could not be deleted at the end.
func placeCLI(exe, root string) (string, error) {
	osName, arch, ext := runtime.GOOS, runtime.GOARCH, ""
	if osName == "windows" {
		osName, ext = "win32", ".exe"
	}
	if arch == "amd64" {
		arch = "x64"
	}
	cli := filepath.Join(root, "node_modules", "@github", "copilot-"+osName+"-"+arch, "copilot"+ext)
	if err := os.MkdirAll(filepath.Dir(cli), 0o700); err != nil {
		return "", err
	}
	if runtime.GOOS != "windows" && os.Link(exe, cli) == nil {
		return cli, nil
	}
	b, err := os.ReadFile(exe)
	if err == nil {
		err = os.WriteFile(cli, b, 0o700)
	}
	return cli, err
}

// holder runs a fake CLI on s (.lock written, .hold flocked), dated back to
// the session's last update: a lock younger than the settle window would
// read "starting". Live, only its .lock is: the .hold, made after the
// process started, proves the process its owner; --exit-on-eof ends it
// should the REPL die without cleaning up. Killed (SIGKILL), its .lock and
// unlocked .hold stay behind.
func (d *demo) holder(now time.Time, s demoSession, kill bool) error {
	state, exts := "inUse", []string{".lock"}
	if kill {
		state, exts = "stale", []string{".lock", ".hold"}
	}
	h, pid, err := d.startHolder(s.id)
	if err != nil {
		d.note(s.id, state, "not set up: "+err.Error())
		return nil
	}
	what := fmt.Sprintf("a fake CLI (pid %d) holds the .lock and flocks the .hold", pid)
	if kill {
		h.Process.Kill()
		h.Wait()
		what = fmt.Sprintf("its CLI (pid %d) was SIGKILLed: .lock and unlocked .hold left behind", pid)
	} else {
		d.holders = append(d.holders, h)
	}
	at := now.Add(-s.age)
	for _, ext := range exts {
		if err := os.Chtimes(filepath.Join(d.stateDir, s.id, "inuse."+strconv.Itoa(pid)+ext), at, at); err != nil {
			return err
		}
	}
	d.note(s.id, state, what)
	return nil
}

// reused: a lock in the pre-.hold format naming a live process that
// started after the lock was written: the PID was reused. The process is
// this REPL, which outlives the demo. The lock is dated ten and a half
// minutes before it started or, on a machine that booted later than that
// (a fresh CI machine), halfway between boot (pid 1's start) and then: a
// lock older than the boot reads predates-boot instead.
func (d *demo) reused() error {
	s, me := demoSessions[2], os.Getpid()
	start, err := sessionlocks.ProcessStart(me)
	if err != nil {
		d.note(s.id, "stale", "not set up: "+err.Error())
		return nil
	}
	age := 10*time.Minute + 30*time.Second
	if boot, err := sessionlocks.ProcessStart(1); err == nil {
		age = min(age, start.Sub(boot)/2)
	}
	if age < 2*time.Second {
		// Closer than that, the start times' tolerance (a second) could
		// not tell the lock's writer from this REPL.
		d.note(s.id, "stale", "not set up: this REPL started too soon after boot")
		return nil
	}
	d.note(s.id, "stale", fmt.Sprintf("old-format .lock naming pid %d, which started after the lock was written (this REPL)", me))
	return writeLock(d.stateDir, s.id, me, start.Add(-age))
}

// unverified: a lock in the pre-.hold format naming a live process older
// than the lock that is not the CLI (pid 1): nothing proves it stale or live.
func (d *demo) unverified(now time.Time) error {
	s := demoSessions[3]
	start, err := sessionlocks.ProcessStart(1)
	if err != nil || now.Sub(start) < 20*time.Second {
		d.note(s.id, "unknown", "not set up: pid 1 is too young or unreadable")
		return nil
	}
	d.note(s.id, "unknown", "old-format .lock naming pid 1: alive and older than the lock, but not the CLI")
	return writeLock(d.stateDir, s.id, 1, now.Add(-min(time.Minute, now.Sub(start)/2)))
}

func (d *demo) note(id, state, what string) {
	d.lines = append(d.lines, fmt.Sprintf("  %s  %-7s  %s", id[:8], state, what))
}

func (d *demo) banner() string {
	return "demo state dir " + d.stateDir + " (removed on exit):\n" + strings.Join(d.lines, "\n") +
		"\ntry: listSessions, canResume 5e55, reclaimStale dryRun=true, .help\n"
}

// startHolder runs the fake CLI on a session and waits (10 s at most) for
// its "ready <pid>".
func (d *demo) startHolder(id string) (*exec.Cmd, int, error) {
	cmd := exec.Command(d.cli, "_fakecli", "--state-dir", d.stateDir, "--session", id, "--exit-on-eof")
	repl.Isolate(cmd)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.StdinPipe() // the cmd keeps it open until Wait
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	hung := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
	var pid int
	_, err := fmt.Fscanf(stdout, "ready %d\n", &pid)
	if !hung.Stop() || err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, 0, fmt.Errorf("the fake CLI did not open the session: %v %s", err, strings.TrimSpace(stderr.String()))
	}
	go io.Copy(io.Discard, stdout)
	return cmd, pid, nil
}

func (d *demo) cleanup() {
	for _, h := range d.holders {
		h.Process.Kill()
		h.Wait()
	}
	d.holders = nil
	os.RemoveAll(d.root)
}

// demoCWD is where a demo project seems to be: a path of this system's kind
// (a POSIX one in a session on Windows says WSL wrote it).
func demoCWD(project string) string {
	if runtime.GOOS == "windows" {
		return `C:\Users\you\src\` + project
	}
	return "/home/you/src/" + project
}

// writeWorkspace writes a session's workspace.yaml as the CLI does, its
// strings quoted (Go's escapes are YAML's).
func writeWorkspace(stateDir, id, name, cwd string, created, updated time.Time) error {
	dir := filepath.Join(stateDir, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	y := fmt.Sprintf("id: %s\ncwd: %q\nclient_name: copilot-cli\nname: %q\nuser_named: false\nsummary_count: 1\nfork_count: 0\ncreated_at: %s\nupdated_at: %s\n",
		id, cwd, name, created.UTC().Format(time.RFC3339Nano), updated.UTC().Format(time.RFC3339Nano))
	return os.WriteFile(filepath.Join(dir, "workspace.yaml"), []byte(y), 0o600)
}

// writeLock writes inuse.<pid>.lock as a CLI before 1.0.102 did, dated written.
func writeLock(stateDir, id string, pid int, written time.Time) error {
	p := filepath.Join(stateDir, id, "inuse."+strconv.Itoa(pid)+".lock")
	if err := os.WriteFile(p, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return err
	}
	return os.Chtimes(p, written, written)
}
