package main

// `sessionlocks call`: one request, in process, from JSON or the REPL's forms.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/copilot-ide/sessionlocks/internal/escape"
	"github.com/copilot-ide/sessionlocks/internal/repl"
	"github.com/copilot-ide/sessionlocks/rpc"
)

func runCall(args []string, stdout, stderr io.Writer) int {
	var help strings.Builder
	help.WriteString(`usage: sessionlocks call [flags] METHOD [PARAMS...]

Runs one request through the same codec and handler as serve and prints the
result as JSON (indented on a terminal). An error goes to stderr, exit status 1.
PARAMS are typed as in the REPL:
  '{"sessionId":"5e55c0de"}'   JSON, sent as typed ("-" reads it from stdin)
  sessionId=5e55c0de dryRun=true   key=value; ids=a,b is an array
  5e55c0de                     a bare argument fills the method's first parameter
A session id may be a unique prefix of one, as sessionlocks list prints them.

methods:`)
	for _, m := range rpc.Methods {
		fmt.Fprintf(&help, "\n  %-13s %s", m.Name, m.Summary)
	}
	fs := newFlags("sessionlocks call", help.String())
	var ef engineFlags
	ef.register(fs)
	var lf logFlags
	lf.register(fs, "warn")
	pos, code, done := parseFlags(fs, args, stdout, stderr)
	if done {
		return code
	}
	if len(pos) == 0 {
		say(stderr, "sessionlocks call: which method? e.g. sessionlocks call listSessions; see sessionlocks call -h")
		return 2
	}
	method, rest := pos[0], pos[1:]
	if len(rest) == 1 && rest[0] == "-" {
		b, err := io.ReadAll(os.Stdin)
		b = bytes.TrimSpace(b)
		if err == nil && !bytes.HasPrefix(b, []byte("{")) && !bytes.HasPrefix(b, []byte("[")) {
			err = errors.New("params from stdin must be JSON, an object or an array; give key=value on the command line instead")
		}
		if err != nil {
			say(stderr, "sessionlocks call: reading params from stdin: %v", err)
			return 2
		}
		rest = []string{string(b)}
	}
	params, err := repl.ParseArgs(method, rest) // the REPL's parser
	if err != nil {
		say(stderr, "sessionlocks call %s: %v", method, err)
		return 2
	}
	log, sink, err := lf.open(stderr)
	if err != nil {
		say(stderr, "sessionlocks call: %v", err)
		return 2
	}
	defer sink.Close(logFlushWait)
	engine, err := ef.engine(log)
	if err != nil {
		say(stderr, "sessionlocks call: %v", err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	serverEnd, clientEnd := net.Pipe() // in memory: server and client in this process
	served := make(chan error, 1)
	go func() {
		served <- rpc.NewServer(rpc.Options{Engine: engine, Logger: log}).Serve(ctx, serverEnd)
	}()
	client := rpc.NewClient(clientEnd, rpc.ClientOptions{Logger: log})
	var result json.RawMessage
	err = client.Call(ctx, method, params, &result)
	client.Close()
	<-served
	if err != nil {
		printCallError(stderr, method, err)
		return 1
	}
	return printJSON(stdout, result)
}

func printCallError(w io.Writer, method string, err error) {
	var e *rpc.Error
	if !errors.As(err, &e) {
		say(w, "sessionlocks call %s: %v", method, err)
		return
	}
	say(w, "sessionlocks call %s: error %d: %s", method, e.Code, e.Message)
	if e.Data != nil {
		fmt.Fprintf(w, "data: %s\n", escape.JSON(*e.Data))
	}
	if e.Code == rpc.CodeSessionNotFound {
		say(w, "sessionlocks list --all lists the sessions there (its ids, or any unique prefix of one, are accepted)")
	}
}

// printJSON prints JSON for a person: indented on a terminal, compact
// otherwise, and escaped (still JSON, meaning the same) either way.
func printJSON(w io.Writer, raw json.RawMessage) int {
	var buf bytes.Buffer
	var err error
	if isTerminal(w) {
		err = json.Indent(&buf, raw, "", "  ")
	} else {
		err = json.Compact(&buf, raw)
	}
	if err != nil {
		buf.Reset()
		buf.Write(raw)
	}
	buf.WriteByte('\n')
	if _, err := w.Write(escape.JSON(buf.Bytes())); err != nil {
		return 1
	}
	return 0
}

// isTerminal reports whether w is a terminal (for indented output).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && repl.IsTerminal(f) && !strings.EqualFold(os.Getenv("TERM"), "dumb")
}
