//go:build realcli && linux

package realcli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/copilot-ide/sessionlocks/internal/realcli"
	"github.com/copilot-ide/sessionlocks/rpc"
)

// sidecar is `sessionlocks serve` spawned as copilot-ide spawns it: a child
// with the user's environment, JSON-RPC with Content-Length framing on its
// stdin and stdout, logs on stderr.
type sidecar struct {
	t      *testing.T
	cmd    *exec.Cmd
	conn   *jsonrpc2.Conn
	stderr strings.Builder
	errMu  sync.Mutex
	// shown: a failing part of the test (an iteration) printed the part of
	// the log written during it, so the whole log is not printed again.
	shown bool

	mu    sync.Mutex
	notes []rpc.SessionsChangedParams
	added chan struct{} // closed and replaced on every notification
}

func (s *sidecar) Write(p []byte) (int, error) { // stderr sink
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.stderr.Write(p)
}

// logLen marks where the log is now, for logSince.
func (s *sidecar) logLen() int {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.stderr.Len()
}

// logSince is the log written since mark, labelled for a failure message;
// it counts as shown.
func (s *sidecar) logSince(mark int, what string) string {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	s.shown = true
	l := s.stderr.String()[mark:]
	if l == "" {
		l = "(nothing)\n"
	}
	return fmt.Sprintf("--- sessionlocks serve log (stderr, --log-level info) %s ---\n%s", what, headTail(l, 150))
}

type stdio struct {
	io.Reader
	io.WriteCloser
}

// startSidecar starts `sessionlocks serve` with HOME=env.Home and no
// --state-dir, so that it finds ~/.copilot/session-state as it would for a user.
func startSidecar(t *testing.T, env *realcli.Env, args ...string) *sidecar {
	t.Helper()
	s := &sidecar{t: t, added: make(chan struct{})}
	s.cmd = exec.Command(sidecarBinary, append([]string{"serve", "--log-level", "info"}, args...)...)
	s.cmd.Env = env.Environ()
	s.cmd.Dir = env.Workdir
	s.cmd.Stderr = s
	in, err := s.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stream := jsonrpc2.NewBufferedStream(stdio{out, in}, jsonrpc2.VSCodeObjectCodec{})
	s.conn = jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(s.handle))
	t.Cleanup(func() {
		s.conn.Close() // closes stdin: the sidecar exits on EOF
		done := make(chan error, 1)
		go func() { done <- s.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("sessionlocks serve exited: %v", err)
			}
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-done
			t.Errorf("sessionlocks serve did not exit within 10s of stdin closing")
		}
		if t.Failed() && !s.shown {
			t.Logf("%s", s.logSince(0, "of the whole test"))
		}
	})
	return s
}

func (s *sidecar) handle(ctx context.Context, c *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	if req.Method != "sessionsChanged" || req.Params == nil {
		return nil, nil
	}
	var p rpc.SessionsChangedParams
	if err := json.Unmarshal(*req.Params, &p); err != nil {
		s.t.Errorf("sessionsChanged params %s: %v", *req.Params, err)
		return nil, nil
	}
	s.mu.Lock()
	s.notes = append(s.notes, p)
	close(s.added)
	s.added = make(chan struct{})
	s.mu.Unlock()
	return nil, nil
}

// call makes one request and fails the test on an error response.
func (s *sidecar) call(method string, params, result any) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if err := s.conn.Call(ctx, method, params, result); err != nil {
		s.t.Fatalf("%s %s: %v", method, mustJSON(params), err)
	}
}

// mark is the number of notifications received so far; waitNotified looks at later ones.
func (s *sidecar) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.notes)
}

// waitNotified waits for a sessionsChanged notification, after mark, that
// reports session id in a state ok accepts, and returns that session.
func (s *sidecar) waitNotified(mark int, id string, what string, ok func(rpc.Session) bool) rpc.Session {
	s.t.Helper()
	deadline := time.After(waitLong)
	for {
		s.mu.Lock()
		notes, added := s.notes[mark:], s.added
		s.mu.Unlock()
		for i, n := range notes {
			for _, sess := range n.Changed {
				if sess.ID == id && ok(sess) {
					s.t.Logf("notification %d: session %s %s", mark+i+1, id, describe(sess))
					return sess
				}
			}
		}
		mark += len(notes)
		select {
		case <-added:
		case <-deadline:
			s.t.Fatalf("no sessionsChanged notification saying session %s is %s within %v; all notifications:\n%s",
				id, what, waitLong, s.dumpNotes())
		}
	}
}

func (s *sidecar) dumpNotes() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for i, n := range s.notes {
		fmt.Fprintf(&b, "  %d: %s\n", i+1, mustJSON(n))
	}
	if b.Len() == 0 {
		return "  (none)\n"
	}
	return b.String()
}

func (s *sidecar) canResume(id string) rpc.CanResumeResult {
	s.t.Helper()
	var r rpc.CanResumeResult
	s.call("canResume", rpc.CanResumeParams{SessionID: id}, &r)
	return r
}

func (s *sidecar) session(id string) rpc.Session {
	s.t.Helper()
	var r rpc.ListSessionsResult
	s.call("listSessions", map[string]any{"ids": []string{id}}, &r)
	if len(r.Sessions) != 1 || r.Sessions[0].ID != id {
		s.t.Fatalf("listSessions {ids:[%s]} = %s", id, mustJSON(r))
	}
	return r.Sessions[0]
}

// headTail returns s whole if it has at most 2n lines, else its first and
// last n: how a failure began and how it ended.
func headTail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 2*n {
		skipped := fmt.Sprintf("(%d lines left out)", len(lines)-2*n)
		lines = append(append(lines[:n:n], skipped), lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// describe is a one-line summary of a session for test logs.
func describe(s rpc.Session) string {
	var hs []string
	for _, h := range s.Holders {
		hs = append(hs, fmt.Sprintf("pid %d %s/%s", h.PID, h.Verdict, h.Reason))
	}
	return fmt.Sprintf("state=%s conflict=%v holders=[%s]", s.State, s.Conflict, strings.Join(hs, ", "))
}

// holderFor finds pid's holder in hs.
func holderFor(hs []rpc.Holder, pid int) (rpc.Holder, bool) {
	for _, h := range hs {
		if h.PID == pid {
			return h, true
		}
	}
	return rpc.Holder{}, false
}
