package repl

// The REPL's end of the wire: `sessionlocks serve` as a child process,
// spoken to with rpc.Client over its stdin and stdout in the Content-Length
// framing the IDE uses, so that what the REPL shows is what the IDE would
// get; and the server's stderr, shown line by line.

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/copilot-ide/sessionlocks/rpc"
)

type server struct {
	cmd    *exec.Cmd
	rpc    *rpc.Client
	exited chan struct{} // closed when the child has been reaped
	exit   error         // the child's exit status; valid after exited
}

// startServer starts argv (the serve command) with o's hooks: its stderr,
// and the client's own complaints, go to logw.
func startServer(argv []string, logw io.Writer, o rpc.ClientOptions) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = logw
	Isolate(cmd)
	o.Framing = rpc.FramingHeader
	o.Logger = slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rc, err := rpc.DialCommand(cmd, o)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	s := &server{cmd: cmd, exited: make(chan struct{}), rpc: rc}
	go func() {
		// Wait closes the stdout pipe, so it must come after the client has
		// read everything the child wrote.
		<-s.rpc.DisconnectNotify()
		s.exit = cmd.Wait()
		close(s.exited)
	}()
	return s, nil
}

// close ends the session the way the IDE does, by closing the child's stdin,
// and waits a little for it to exit before killing it.
func (s *server) close() error {
	s.rpc.Close()
	select {
	case <-s.exited:
	case <-time.After(2 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	return s.exit
}

// lineWriter hands each complete line written to it to emit.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	emit func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.emit(string(bytes.TrimRight(w.buf[:i], "\r")))
		w.buf = w.buf[i+1:]
	}
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(string(w.buf))
		w.buf = nil
	}
}
