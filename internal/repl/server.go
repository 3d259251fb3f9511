package repl

// The REPL's end of the wire: `sessionlocks serve` as a child process,
// spoken to with rpc.Client over its stdin and stdout in the Content-Length
// framing the IDE uses, so that what the REPL shows is what the IDE would
// get; and the server's stderr, shown line by line.

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"time"

	"github.com/copilot-ide/sessionlocks/rpc"
)

type server struct {
	cmd    *exec.Cmd
	rpc    *rpc.Client
	exited chan struct{} // closed when the child has been reaped
	exit   error         // the child's exit status; valid after exited
}

// startServer starts argv (the serve command) with o's hooks: each line of
// its stderr, and of the client's own complaints, goes to logLine.
func startServer(argv []string, logLine func(string), o rpc.ClientOptions) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	logr, logw := io.Pipe()
	cmd.Stderr = logw
	Isolate(cmd)
	o.Framing = rpc.FramingHeader
	o.Logger = slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rc, err := rpc.DialCommand(cmd, o)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(logr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			logLine(sc.Text())
		}
		io.Copy(io.Discard, logr) // past a line too long: serve is never blocked
	}()
	s := &server{cmd: cmd, exited: make(chan struct{}), rpc: rc}
	go func() {
		// Wait closes the stdout pipe, so it must come after the client has
		// read everything the child wrote; what it logged shows before its exit.
		<-s.rpc.DisconnectNotify()
		s.exit = cmd.Wait()
		logw.Close()
		<-logged
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
