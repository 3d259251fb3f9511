package rpc

// The server's lifecycle: its options, what it uses of the engine and the
// watcher, and Serve, which runs the watcher beside one connection until the
// input ends (stdin EOF), the output breaks (EPIPE) or the context is done,
// then shuts both down.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
	"github.com/copilot-ide/sessionlocks/watch"
	"github.com/sourcegraph/jsonrpc2"
)

// Watcher is what the server uses of a *watch.Watcher.
type Watcher interface {
	Run(ctx context.Context, notify func(watch.Change)) error
	Stats() watch.Stats
	// Started is closed once the watcher has its first listing and its
	// watches (see watch.Watcher); the server does not wait on a nil channel.
	Started() <-chan struct{}
}

// Options configure a Server.
type Options struct {
	Engine *sessionlocks.Engine // answers every method; required
	// Watcher, if set, is run by Serve and its changes are pushed as
	// sessionsChanged notifications.
	Watcher        Watcher
	Logger         *slog.Logger               // nil means slog.Default()
	MaxMessageSize int64                      // the limit on one incoming message; 0 means DefaultMaxMessageSize
	Trace          func(in bool, body []byte) // sees every message body read or written; must not retain it
	LogDropped     func() uint64              // counts the log lines dropped because nobody read the log (status)

	// sequential handles one request at a time, in order, so that transcript
	// tests get their answers in a deterministic order.
	sequential bool
	// testHookAnswered, if set, is called when a request's result has been
	// made, before it is sent (a listing still holds notifications back).
	testHookAnswered func(method string)
}

// Server answers JSON-RPC requests about one state directory.
type Server struct {
	opts     Options
	engine   *sessionlocks.Engine
	log      *slog.Logger
	started  time.Time
	watching atomic.Bool
	// watched is closed once the watcher has its first listing and its
	// watches, watchDone once it stopped; set before serving.
	watched, watchDone <-chan struct{}
}

const (
	// drainTimeout is how long running requests get to answer once the input
	// ends: the process exits well within a second of stdin closing.
	drainTimeout = 500 * time.Millisecond
	// startWait bounds how long a mutation waits for the watcher to start.
	startWait = 2 * time.Second
)

// awaitWatched lets a request that removes locks wait until the watcher has
// its first listing and its watches: a lock removed earlier could be missing
// from that listing already, and a client told the server is watching would
// never hear of the change.
func (s *Server) awaitWatched(ctx context.Context) error {
	if s.watched == nil {
		return nil
	}
	select {
	case <-s.watched:
	case <-s.watchDone:
	case <-time.After(startWait):
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// NewServer returns a server; it serves nothing until Serve.
func NewServer(opts Options) *Server {
	if opts.Engine == nil {
		panic("rpc.NewServer: Options.Engine is nil")
	}
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	return &Server{opts: opts, engine: opts.Engine, log: opts.Logger, started: time.Now()}
}

// Serve speaks JSON-RPC over rwc until the peer closes its side (it returns
// nil) or ctx is done (it returns ctx.Err()). It runs the watcher, if any,
// for as long; a server with a watcher serves one connection at a time.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := &handler{s: s, running: map[jsonrpc2.ID]*inflight{}, active: map[bool]int{}, answers: make(chan struct{}, maxAnswers)}
	h.room = sync.NewCond(&h.mu)
	stream := NewStream(rwc, StreamOptions{
		MaxMessageSize: s.opts.MaxMessageSize,
		Logger:         s.log,
		Trace:          s.opts.Trace,
		onEOF:          func() { h.drain(drainTimeout) },
	})
	watchDone := make(chan struct{})
	w := s.opts.Watcher
	if w != nil {
		// Set before the connection reads its first request (mutations read them).
		s.watchDone, s.watched = watchDone, w.Started()
		s.watching.Store(true)
	} else {
		close(watchDone)
	}
	conn := jsonrpc2.NewConn(ctx, stream, h, jsonrpc2.OnSend(stream.sending), jsonrpc2.SetLogger(connLog{stream}))
	if w != nil {
		go func() {
			defer close(watchDone)
			defer s.watching.Store(false)
			vl := verdictLog{log: s.log, seen: map[string]string{}}
			err := w.Run(ctx, func(c watch.Change) {
				vl.change(c)
				p := wireChange(c)
				h.order.Lock() // sent once no listing is under way
				err := conn.Notify(ctx, NotifySessionsChanged, p)
				h.order.Unlock()
				if err != nil && ctx.Err() == nil {
					s.log.Warn("sending sessionsChanged failed", "error", err)
				}
			})
			if err != nil && ctx.Err() == nil {
				s.log.Warn("watching stopped; sessionsChanged will not be sent", "error", err)
			}
		}()
	}

	var err error
	select {
	case <-conn.DisconnectNotify():
		s.log.Debug("input closed")
	case <-stream.broken:
		s.log.Info("output closed; nobody reads the answers any more", "error", stream.brokenErr)
	case <-ctx.Done():
		err = ctx.Err()
	}
	cancel()
	conn.Close()
	h.cancelAll()
	select {
	case <-watchDone:
	case <-time.After(200 * time.Millisecond):
		// Typically blocked writing a notification to a client that stopped
		// reading; the process is about to exit, so not a warning.
		s.log.Debug("watcher did not stop within 200ms")
	}
	return err
}

// connLog lets jsonrpc2 log through slog, rate-limited: what it logs (an
// answer to no request) a peer can send in a loop.
type connLog struct{ s *Stream }

func (l connLog) Printf(format string, args ...any) {
	l.s.warn.warn(l.s.log, format, strings.TrimSpace(fmt.Sprintf(format, args...)))
}
