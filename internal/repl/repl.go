// Package repl is `sessionlocks repl`: a JSON-RPC console that spawns
// `sessionlocks serve` and drives it over the same pipes and framing the IDE
// uses, so that a person debugging "why does the IDE say this session is in
// use?" sees exactly what the IDE would see. This file runs the loop and
// sends what is typed.
package repl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"time"

	"github.com/peterh/liner"
	"github.com/sourcegraph/jsonrpc2"

	"github.com/copilot-ide/sessionlocks/rpc"
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
	// HistoryFile is where interactive input is kept between runs; "" keeps none.
	HistoryFile string
	// Banner is printed once connected (the demo says what it set up).
	Banner string
}

// IsTerminal reports whether f is a terminal (a console on Windows), as a
// character device: the one check every system answers alike. /dev/null
// passes too, where line editing and colour cost nothing.
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

const (
	prompt         = "sessionlocks> "
	continuePrompt = "... "
)

type repl struct {
	o     Options
	out   *printer
	srv   *server
	cat   *catalog
	parse parser
	line  *liner.State

	trace, notes atomic.Bool
	failed       atomic.Bool   // a command failed: a script exits 1
	notified     chan struct{} // a notification came since the last request
	answers      answers

	sigint     chan os.Signal
	cancelCall atomic.Pointer[context.CancelFunc] // set while a call is in flight
}

// Run runs the REPL until .quit, end of input, the server's exit, or ctx's
// end (the caller cancels it on SIGTERM and the like). It returns the exit code.
func Run(ctx context.Context, o Options) int {
	cat := protocolCatalog()
	r := &repl{o: o, cat: cat, out: &printer{w: o.Out, color: o.Color}, notified: make(chan struct{}, 1)}
	r.parse = parser{cat: cat, vars: r.answers.value}
	r.notes.Store(true)

	logLine := func(l string) { r.out.print(r.out.line(sgrDim, "serve: "+l)) }
	var err error
	r.srv, err = startServer(o.Serve, logLine, rpc.ClientOptions{OnLateAnswer: r.onLateAnswer, Trace: r.onFrame})
	if err != nil {
		warn(o.Err, "sessionlocks repl:", err)
		return 1
	}
	reported := false // the server's exit, already
	defer func() {
		if err := r.srv.close(); err != nil && ctx.Err() == nil && !reported {
			warn(o.Err, "sessionlocks repl: serve:", err)
		}
	}()
	interrupted := r.handleInterrupts()
	defer signal.Stop(r.sigint)

	// The sessions, before the first prompt: their ids complete, and the
	// state dir is shown.
	var res json.RawMessage
	if err := r.srv.rpc.Call(ctx, "listSessions", nil, &res); err == nil {
		r.answers.learn(res, false)
	} else if !errors.As(err, new(*rpc.Error)) {
		warn(o.Err, "sessionlocks repl:", err)
		return 1
	}
	for l := range strings.Lines(o.Banner) {
		r.out.print(r.out.line("", strings.TrimSuffix(l, "\n")))
	}
	if o.Interactive {
		r.out.print(r.out.line("", fmt.Sprintf("sessionlocks serve (pid %d) on %s", r.srv.cmd.Process.Pid, r.answers.dir)) +
			".help lists methods and commands; Tab completes; Ctrl-D quits.\n")
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
		case <-r.srv.exited:
			reported = true
			msg := "exit status 0"
			if r.srv.exit != nil {
				msg = r.srv.exit.Error()
			}
			r.out.print(r.out.line(sgrError, "sessionlocks serve exited: "+msg))
			return 1
		case <-ctx.Done():
			return 1
		}
	}
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
			switch cancel := r.cancelCall.Load(); {
			case cancel != nil:
				(*cancel)()
			case !r.o.Interactive:
				close(quit)
				return
			}
		}
	}()
	return quit
}

func (r *repl) fail(msg string) {
	r.failed.Store(true)
	r.out.print(r.out.line(sgrError, msg))
}

// exitCode is 1 when a script had a command fail, so that a shell script
// driving the REPL can tell; at a terminal, failures were seen already.
func (r *repl) exitCode() int {
	if !r.o.Interactive && r.failed.Load() {
		return 1
	}
	return 0
}

// execute runs one input and reports whether the REPL should quit.
func (r *repl) execute(ctx context.Context, text string) (quit bool) {
	text = strings.TrimSpace(text)
	if done, quit := r.command(text); done {
		return quit
	}
	method, params, err := r.parse.parse(text)
	if err != nil {
		r.fail("error: " + err.Error())
		return false
	}
	var p any // nil: no params member
	if params != nil {
		p = params
	}
	if m := r.cat.method(method); m != nil && m.Notification {
		if m.Sender == "server" {
			r.fail("error: " + method + " is a notification the server sends; the REPL shows it as it comes")
		} else if err := r.srv.rpc.Notify(ctx, method, p); err != nil {
			r.fail("error: " + err.Error())
		} else {
			r.out.print(r.out.line(sgrDim, "(notification sent; no reply expected)"))
		}
		return false
	}
	select {
	case <-r.notified: // .wait waits for one that comes after this request
	default:
	}
	callCtx, cancel := context.WithCancel(ctx)
	r.cancelCall.Store(&cancel)
	start := time.Now()
	var res json.RawMessage
	err = r.srv.rpc.Call(callCtx, method, p, &res)
	took := duration(time.Since(start))
	r.cancelCall.Store(nil)
	cancel()
	var rpcErr *rpc.Error
	switch {
	case err == nil:
		r.answers.learn(res, true)
		r.out.print(r.out.json(res) + r.out.line(sgrDim, "("+took+")"))
	case errors.As(err, &rpcErr):
		r.fail(fmt.Sprintf("error %d: %s", rpcErr.Code, rpcErr.Message))
		if rpcErr.Data != nil {
			if rpcErr.Code == rpc.CodeSessionChanged {
				r.answers.learn(*rpcErr.Data, false) // a fresh canResume answer: its token is $token
			}
			r.out.print("data: " + r.out.json(*rpcErr.Data))
		}
		r.out.print(r.out.line(sgrDim, "("+took+")"))
	case errors.Is(err, context.Canceled) && ctx.Err() == nil:
		r.fail("interrupted after " + took + "; sent $/cancelRequest (the server's answer shows here when it comes)")
	case errors.Is(err, jsonrpc2.ErrClosed):
		r.fail("error: connection to sessionlocks serve lost")
	default:
		r.fail("error: " + err.Error())
	}
	return false
}
