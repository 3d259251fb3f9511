package realcli

// The real CLI run interactively in a private tmux server.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Terminal is the CLI running interactively in a private tmux server, which
// is how a person meets its "Session in use" dialog. Observed with 1.0.102:
// an interactive `copilot --resume=<id>` does not write its inuse.<pid>.lock
// until the first prompt is submitted, and it asks about folder trust first
// unless COPILOT_ALLOW_ALL=true.
type Terminal struct {
	tmux string
	sock string // private server socket; its directory is removed by Close
	env  []string
	pid  int
}

// ErrNoTmux means tmux is not installed; callers skip the interactive checks.
var ErrNoTmux = errors.New("tmux is not installed")

// Interactive starts `copilot args...` in a 200x50 tmux pane of its own server.
func (e *Env) Interactive(ctx context.Context, args ...string) (*Terminal, error) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		return nil, ErrNoTmux
	}
	// A socket path must fit in sun_path (108 bytes), so not under t.TempDir().
	dir, err := os.MkdirTemp("", "realcli-tmux-")
	if err != nil {
		return nil, err
	}
	t := &Terminal{
		tmux: tmux,
		sock: filepath.Join(dir, "s"),
		// The server, and so the pane, inherits the client's environment.
		env: append(e.Environ(), "TERM=xterm-256color", "COPILOT_ALLOW_ALL=true"),
	}
	argv := append([]string{"new-session", "-d", "-x", "200", "-y", "50", "-c", e.Workdir, "--", e.Binary}, args...)
	if _, err := t.run(ctx, argv...); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// Keep the pane after the CLI exits, so that its last words can be read.
	t.run(ctx, "set-option", "-g", "remain-on-exit", "on")
	out, err := t.run(ctx, "display-message", "-p", "#{pane_pid}")
	if err != nil {
		t.Close()
		return nil, err
	}
	if t.pid, err = strconv.Atoi(strings.TrimSpace(out)); err != nil {
		t.Close()
		return nil, fmt.Errorf("tmux pane pid %q: %v", out, err)
	}
	return t, nil
}

func (t *Terminal) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, t.tmux, append([]string{"-S", t.sock}, args...)...)
	cmd.Env = t.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("tmux %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Screen returns the visible text of the pane, trailing blank lines trimmed.
func (t *Terminal) Screen(ctx context.Context) (string, error) {
	out, err := t.run(ctx, "capture-pane", "-p", "-J")
	return strings.TrimRight(out, "\n "), err
}

// Send types keys into the pane (tmux key names such as Enter are allowed).
func (t *Terminal) Send(ctx context.Context, keys ...string) error {
	_, err := t.run(ctx, append([]string{"send-keys"}, keys...)...)
	return err
}

// WaitScreen waits until the screen contains any of texts and returns the
// screen and the text it found.
func (t *Terminal) WaitScreen(ctx context.Context, texts ...string) (screen, found string, err error) {
	for {
		screen, err = t.Screen(ctx)
		if err == nil {
			for _, s := range texts {
				if strings.Contains(screen, s) {
					return screen, s, nil
				}
			}
		}
		if !t.Alive() {
			screen, _ = t.Screen(ctx)
			return screen, "", fmt.Errorf("copilot (pid %d) exited before the screen showed any of %q; last screen:\n%s", t.pid, texts, screen)
		}
		select {
		case <-ctx.Done():
			return screen, "", fmt.Errorf("screen never showed any of %q (%v); last screen:\n%s", texts, ctx.Err(), screen)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Alive reports whether the CLI in the pane is still running.
func (t *Terminal) Alive() bool { return processAlive(t.pid) }

// WaitHolder waits until the CLI in the pane has locked session id.
func (t *Terminal) WaitHolder(ctx context.Context, e *Env, id string) (Holder, error) {
	screen := func() string { s, _ := t.Screen(ctx); return s }
	return e.waitHolder(ctx, t.pid, id, func() bool { return !t.Alive() }, screen)
}

// Close kills the CLI's process group and the tmux server.
func (t *Terminal) Close() {
	if t.pid > 0 {
		// tmux made the pane's process a session (and group) leader.
		killGroup(t.pid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.run(ctx, "kill-server")
	os.RemoveAll(filepath.Dir(t.sock))
}
