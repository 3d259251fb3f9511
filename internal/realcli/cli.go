package realcli

// Running the real CLI in an isolated HOME, headless, and waiting for its locks.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/copilot-ide/sessionlocks/internal/syncbuf"
)

// Env is one isolated world for the CLI: its own HOME (so ~/.copilot is
// private to one test), a working directory, and the provider it talks to.
type Env struct {
	// Binary is the native copilot executable.
	Binary string
	// Home becomes HOME; the CLI keeps its state in Home/.copilot.
	Home string
	// CacheHome becomes XDG_CACHE_HOME. Share it between Envs: on first use
	// the CLI unpacks a 235 MB runtime there (about 2 s), and only once per directory.
	CacheHome string
	// Workdir is the CLI's working directory, the session's cwd.
	Workdir string
	// ProviderURL becomes COPILOT_PROVIDER_BASE_URL.
	ProviderURL string
}

// StateDir is where the CLI keeps its sessions: $HOME/.copilot/session-state.
func (e *Env) StateDir() string { return filepath.Join(e.Home, ".copilot", "session-state") }

// SessionDir is one session's directory.
func (e *Env) SessionDir(id string) string { return filepath.Join(e.StateDir(), id) }

// Environ is the CLI's environment: the caller's, minus anything that could
// point it at the user's own state or credentials, plus the offline settings.
func (e *Env) Environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "HOME" || strings.HasPrefix(k, "XDG_") || strings.HasPrefix(k, "COPILOT_") ||
			k == "GH_TOKEN" || k == "GITHUB_TOKEN" || k == "GH_HOST" {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+e.Home,
		"XDG_CACHE_HOME="+e.CacheHome,
		"XDG_CONFIG_HOME="+filepath.Join(e.Home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(e.Home, ".local", "state"),
		"XDG_DATA_HOME="+filepath.Join(e.Home, ".local", "share"),
		"COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL="+e.ProviderURL,
		"COPILOT_MODEL=gpt-4o",
	)
}

// Prompt runs `copilot -p PROMPT --allow-all-tools [extra...]` non-interactively
// in its own process group. With the Provider it opens (or, with
// --resume=<id>, resumes) a session and waits for the model until killed.
func (e *Env) Prompt(prompt string, extra ...string) (*Proc, error) {
	args := append([]string{"-p", prompt, "--allow-all-tools"}, extra...)
	cmd := exec.Command(e.Binary, args...)
	cmd.Dir = e.Workdir
	cmd.Env = e.Environ()
	cmd.Stdin = nil // /dev/null: nothing to read, no terminal
	p := &Proc{done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &p.out, &p.out
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.Cmd, p.PID = cmd, cmd.Process.Pid
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Proc is a CLI process started by Prompt.
type Proc struct {
	Cmd  *exec.Cmd
	PID  int
	out  syncbuf.Buffer
	done chan struct{}
	err  error
}

// Output is what the CLI has printed so far, stdout and stderr together.
func (p *Proc) Output() string { return p.out.String() }

// Exited reports whether the process has exited, and how.
func (p *Proc) Exited() (bool, *os.ProcessState) {
	select {
	case <-p.done:
		return true, p.Cmd.ProcessState
	default:
		return false, nil
	}
}

// Signal sends sig to the CLI process only.
func (p *Proc) Signal(sig syscall.Signal) error { return p.Cmd.Process.Signal(sig) }

// Wait waits for the process to exit or ctx to end.
func (p *Proc) Wait(ctx context.Context) (*os.ProcessState, error) {
	select {
	case <-p.done:
		return p.Cmd.ProcessState, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("pid %d still running: %w", p.PID, ctx.Err())
	}
}

// Kill sends SIGKILL to the CLI's whole process group (the CLI and anything
// it spawned) and reaps it. It is safe to call more than once.
func (p *Proc) Kill() {
	// Once reaped, the pid (and so the group id) may belong to someone else.
	if done, _ := p.Exited(); !done {
		killGroup(p.PID)
	}
	<-p.done
}

// Holder is the pair of files a CLI process writes into a session directory.
type Holder struct {
	SessionID string
	PID       int
	Lock      string // inuse.<pid>.lock
	Hold      string // inuse.<pid>.hold
}

// HolderFiles names the files pid would write into sessionDir.
func HolderFiles(sessionDir string, pid int) Holder {
	p := strconv.Itoa(pid)
	return Holder{
		SessionID: filepath.Base(sessionDir),
		PID:       pid,
		Lock:      filepath.Join(sessionDir, "inuse."+p+".lock"),
		Hold:      filepath.Join(sessionDir, "inuse."+p+".hold"),
	}
}

// Complete reports whether the lock holds "<pid>\n" and the hold is flocked:
// the state a live 1.0.102 CLI keeps its session in.
func (h Holder) Complete() bool {
	b, err := os.ReadFile(h.Lock)
	if err != nil || string(b) != strconv.Itoa(h.PID)+"\n" {
		return false
	}
	held, err := HoldLocked(h.Hold)
	return err == nil && held
}

// Exists reports whether either of the holder's files exists.
func (h Holder) Exists() bool {
	_, e1 := os.Lstat(h.Lock)
	_, e2 := os.Lstat(h.Hold)
	return e1 == nil || e2 == nil
}

// pollInterval is how often the Wait helpers look. They wait for an event
// with a generous deadline; nothing asserts how long it took.
const pollInterval = 20 * time.Millisecond

// WaitHolder waits until p's lock and flocked hold appear in session id's
// directory (in any session directory when id is empty) and returns them. It
// fails early if p exits.
func (e *Env) WaitHolder(ctx context.Context, p *Proc, id string) (Holder, error) {
	exited := func() bool { done, _ := p.Exited(); return done }
	return e.waitHolder(ctx, p.PID, id, exited, p.Output)
}

func (e *Env) waitHolder(ctx context.Context, pid int, id string, exited func() bool, output func() string) (Holder, error) {
	for {
		dirs := []string{e.SessionDir(id)}
		if id == "" {
			dirs, _ = filepath.Glob(filepath.Join(e.StateDir(), "*"))
		}
		for _, d := range dirs {
			if h := HolderFiles(d, pid); h.Complete() {
				return h, nil
			}
		}
		if exited() {
			return Holder{}, fmt.Errorf("copilot (pid %d) exited before locking its session; output:\n%s", pid, output())
		}
		select {
		case <-ctx.Done():
			return Holder{}, fmt.Errorf("copilot (pid %d) has not locked a session: %w; output:\n%s", pid, ctx.Err(), output())
		case <-time.After(pollInterval):
		}
	}
}
