// Package repl is `sessionlocks repl`: a JSON-RPC console that spawns
// `sessionlocks serve` and drives it over the same pipes and framing the IDE
// uses, so that a person debugging "why does the IDE say this session is in
// use?" sees exactly what the IDE would see.
package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peterh/liner"
)

// Options configure Run.
type Options struct {
	// Serve is the command line of the server to spawn, e.g.
	// [/path/to/sessionlocks serve --state-dir DIR].
	Serve []string
	// In, Out and Err are the REPL's streams. Interactive says In and Out are
	// a terminal (line editing, completion, history); otherwise In is a
	// script, one command a line, and the REPL exits at its end.
	In          io.Reader
	Out, Err    io.Writer
	Interactive bool
	// Color paints JSON and errors; the caller decides (terminal, NO_COLOR).
	Color bool
	// Trace starts with raw frames shown.
	Trace bool
	// HistoryFile is where interactive input is kept between runs; "" keeps none.
	HistoryFile string
	// Banner is printed once connected (the demo says what it set up).
	Banner string
}

// IsTerminal reports whether f is a terminal (a console on Windows).
func IsTerminal(f *os.File) bool { return isTerminal(f.Fd()) }

const (
	prompt         = "sessionlocks> "
	continuePrompt = "... "
)

type repl struct {
	o     Options
	out   *printer
	cl    *client
	cat   *catalog
	parse parser
	line  *liner.State

	trace, notes atomic.Bool
	failed       atomic.Bool // a command failed: a script exits 1

	idsMu sync.Mutex
	ids   []string // known session ids, newest first
	dir   string   // the server's state dir

	// Notifications counted, for .wait.
	nmu   sync.Mutex
	nseq  uint64        // notifications so far
	nmark uint64        // nseq when the last request was sent
	nwake chan struct{} // closed and replaced on every notification

	sigint     chan os.Signal
	callMu     sync.Mutex
	cancelCall context.CancelFunc // non-nil while a call is in flight
}

// handleInterrupts makes Ctrl-C cancel the call in flight. While a call runs
// the terminal is in cooked mode, so Ctrl-C is a SIGINT to the REPL alone (its
// children are in their own process group); at the prompt liner reads it as
// a key and drops the line. Reading a script, an interrupt between calls
// ends the REPL, which then cleans up: the returned channel says so.
func (r *repl) handleInterrupts() <-chan struct{} {
	r.sigint = make(chan os.Signal, 1)
	signal.Notify(r.sigint, os.Interrupt)
	quit := make(chan struct{})
	go func() {
		for range r.sigint {
			r.callMu.Lock()
			cancel := r.cancelCall
			r.callMu.Unlock()
			switch {
			case cancel != nil:
				cancel()
			case !r.o.Interactive:
				close(quit)
				return
			}
		}
	}()
	return quit
}

// Run runs the REPL until .quit, end of input, the server's exit, or ctx's
// end (the caller cancels it on SIGTERM and the like). It returns the exit code.
func Run(ctx context.Context, o Options) int {
	r := &repl{o: o, out: &printer{w: o.Out, color: o.Color, redraw: redrawLine}, nwake: make(chan struct{})}
	r.notes.Store(true)
	r.parse = parser{}

	logw := &lineWriter{emit: func(l string) { r.out.async(r.out.paint(sgrDim, "serve: "+l) + "\n") }}
	cl, err := startClient(o.Serve, logw, r.onFrame, r.onLateAnswer)
	if err != nil {
		fmt.Fprintln(o.Err, "sessionlocks repl:", err)
		return 1
	}
	r.cl = cl
	reported := false // the server's exit, already
	defer func() {
		if err := cl.close(); err != nil && ctx.Err() == nil && !reported {
			fmt.Fprintln(o.Err, "sessionlocks repl: serve:", err)
		}
		logw.flush()
	}()

	interrupted := r.handleInterrupts()
	defer signal.Stop(r.sigint)

	if !r.connect(ctx) {
		return 1
	}
	// Traced from here: the start-up calls (a 20 KB OpenRPC document and
	// the session list) would bury the prompt.
	r.trace.Store(o.Trace)
	if o.Banner != "" {
		r.out.print(o.Banner)
	}
	if o.Interactive {
		r.out.printf("sessionlocks serve (pid %d) on %s\n.help lists methods and commands; Tab completes; Ctrl-D quits.\n",
			cl.cmd.Process.Pid, r.dir)
	}

	lines, next := r.reader()
	defer r.closeLine()
	for {
		select {
		case l, ok := <-lines:
			if !ok || r.execute(ctx, l) {
				return r.exitCode()
			}
			next <- struct{}{}
		case <-interrupted:
			return 130
		case <-cl.exited:
			reported = true
			r.out.async(r.out.paint(sgrError, fmt.Sprintf("sessionlocks serve exited: %v", exitText(cl.exit))) + "\n")
			return 1
		case <-ctx.Done():
			return 1
		}
	}
}

// wait returns once a notification has arrived since the last request was
// sent, or after d, saying so.
func (r *repl) wait(d time.Duration) {
	timeout := time.After(d)
	for {
		r.nmu.Lock()
		got, wake := r.nseq > r.nmark, r.nwake
		r.nmu.Unlock()
		if got {
			return
		}
		select {
		case <-wake:
		case <-timeout:
			r.out.print(r.out.paint(sgrDim, fmt.Sprintf("(no notification within %s)", d)) + "\n")
			return
		}
	}
}

// fail prints an error line and remembers that something failed.
func (r *repl) fail(msg string) {
	r.failed.Store(true)
	r.out.print(r.out.paint(sgrError, msg) + "\n")
}

// exitCode is 1 when a script had a command fail, so that a shell script
// driving the REPL can tell; at a terminal, failures were seen already.
func (r *repl) exitCode() int {
	if !r.o.Interactive && r.failed.Load() {
		return 1
	}
	return 0
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// connect learns the methods (rpc.discover) and the sessions (listSessions)
// before the first prompt, for completion and id prefixes.
func (r *repl) connect(ctx context.Context) bool {
	res, err := r.cl.call(ctx, "rpc.discover", nil)
	if err != nil {
		fmt.Fprintf(r.o.Err, "sessionlocks repl: %v\n", err)
		return false
	}
	if res.Err != nil {
		r.out.print(r.out.paint(sgrDim, fmt.Sprintf("note: rpc.discover failed (%d %s): no completion of methods or params, no .help METHOD\n", res.Err.Code, res.Err.Message)))
	} else if r.cat, err = newCatalog(res.Result); err != nil {
		r.out.print(r.out.paint(sgrDim, "note: "+err.Error()+"\n"))
	}
	r.parse.cat = r.cat
	r.refreshIDs(ctx)
	return true
}

// execute runs one input and reports whether the REPL should quit.
func (r *repl) execute(ctx context.Context, text string) (quit bool) {
	text = strings.TrimSpace(text)
	if strings.HasPrefix(text, ".") {
		return r.dot(text)
	}
	method, params, err := r.parse.parse(text)
	if err != nil {
		r.fail("error: " + err.Error())
		return false
	}
	if m := r.cat.method(method); m != nil && m.notification() == fromClient {
		if err := r.cl.notify(ctx, method, params); err != nil {
			r.fail("error: " + err.Error())
		} else {
			r.out.print(r.out.paint(sgrDim, "(notification sent; no reply expected)") + "\n")
		}
		return false
	}
	r.nmu.Lock()
	r.nmark = r.nseq
	r.nmu.Unlock()
	callCtx, cancel := context.WithCancel(ctx)
	r.callMu.Lock()
	r.cancelCall = cancel
	r.callMu.Unlock()
	res, err := r.cl.call(callCtx, method, params)
	r.callMu.Lock()
	r.cancelCall = nil
	r.callMu.Unlock()
	cancel()
	switch {
	case errors.Is(err, context.Canceled) && ctx.Err() == nil:
		r.fail(fmt.Sprintf("interrupted after %s; sent $/cancelRequest (the server's answer shows here when it comes)", duration(res.Duration)))
	case err != nil:
		r.fail("error: " + err.Error())
	case res.Err != nil:
		r.fail(fmt.Sprintf("error %d: %s", res.Err.Code, res.Err.Message))
		if res.Err.Data != nil {
			r.out.print("data: " + r.out.json(*res.Err.Data))
		}
		r.out.print(r.out.paint(sgrDim, "("+duration(res.Duration)+")") + "\n")
	default:
		r.learn(method, params, res.Result)
		r.out.print(r.out.json(res.Result))
		r.out.print(r.out.paint(sgrDim, "("+duration(res.Duration)+")") + "\n")
	}
	return false
}
