package main

// `sessionlocks call`: one request, in process, from JSON or the REPL's forms.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/copilot-ide/sessionlocks/internal/repl"
	"github.com/copilot-ide/sessionlocks/rpc"
)

func init() {
	register("call", command{
		summary: "run one JSON-RPC request in-process and print the result",
		run:     runCall,
	})
}

func runCall(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("sessionlocks call", func(fs *flag.FlagSet) {
		w := fs.Output()
		fmt.Fprintln(w, `usage: sessionlocks call [flags] METHOD [PARAMS...]

Runs one request through the same codec and handler as serve and prints the
result as JSON (indented on a terminal). An error goes to stderr, exit status 1.
PARAMS are typed as in the REPL:
  '{"sessionId":"5e55c0de"}'   JSON, sent as typed ("-" reads it from stdin)
  sessionId=5e55c0de dryRun=true   key=value; ids=a,b is an array
  5e55c0de                     a bare argument fills the method's first parameter
A session id may be a unique prefix of one, as sessionlocks list prints them.

methods:`)
		for _, m := range rpc.Methods {
			fmt.Fprintf(w, "  %-13s %s\n", m.Name, m.Summary)
		}
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
	})
	var ef engineFlags
	ef.register(fs)
	var lf logFlags
	lf.register(fs, "warn")
	pos, code, done := parseFlags(fs, args, stdout, stderr)
	if done {
		return code
	}
	if len(pos) == 0 {
		fmt.Fprintln(stderr, "sessionlocks call: which method? e.g. sessionlocks call listSessions; see sessionlocks call -h")
		return 2
	}
	method, rest := pos[0], pos[1:]
	if len(rest) == 1 && rest[0] == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(stderr, "sessionlocks call: reading params from stdin:", err)
			return 2
		}
		rest = []string{string(bytes.TrimSpace(b))}
		if !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) && !bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
			fmt.Fprintln(stderr, "sessionlocks call: params from stdin must be JSON, an object or an array; give key=value on the command line instead")
			return 2
		}
	}
	// The REPL's parser, with the schema the server serves (rpc.discover).
	params, err := repl.ParseArgs(method, rest)
	if err != nil {
		fmt.Fprintf(stderr, "sessionlocks call %s: %v\n", method, err)
		return 2
	}
	log, closeLog, err := newLogger(lf.level, lf.file, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "sessionlocks call:", err)
		return 2
	}
	defer closeLog()
	engine, err := ef.engine(log)
	if err != nil {
		fmt.Fprintln(stderr, "sessionlocks call:", err)
		return 1
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	serverEnd, clientEnd := rpc.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- rpc.NewServer(rpc.Options{Engine: engine, Logger: log}).Serve(ctx, serverEnd)
	}()
	client := rpc.NewClient(clientEnd, rpc.ClientOptions{Logger: log})
	var result json.RawMessage
	var p any // nil: no params member at all
	if params != nil {
		p = params
	}
	err = client.Call(ctx, method, p, &result)
	client.Close()
	<-served
	if err != nil {
		printCallError(stderr, method, err)
		return 1
	}
	return printJSON(stdout, result, isTerminal(stdout))
}

func printCallError(w io.Writer, method string, err error) {
	var e *rpc.Error
	if !errors.As(err, &e) {
		fmt.Fprintf(w, "sessionlocks call %s: %v\n", method, err)
		return
	}
	fmt.Fprintf(w, "sessionlocks call %s: error %d: %s\n", method, e.Code, e.Message)
	if e.Data != nil {
		fmt.Fprintf(w, "data: %s\n", *e.Data)
	}
	if e.Code == rpc.CodeSessionNotFound {
		fmt.Fprintln(w, "sessionlocks list --all lists the sessions there (its ids, or any unique prefix of one, are accepted)")
	}
}

func printJSON(w io.Writer, raw json.RawMessage, indent bool) int {
	var buf bytes.Buffer
	var err error
	if indent {
		err = json.Indent(&buf, raw, "", "  ")
	} else {
		err = json.Compact(&buf, raw)
	}
	if err != nil {
		buf.Reset()
		buf.Write(raw)
	}
	buf.WriteByte('\n')
	if _, err := w.Write(buf.Bytes()); err != nil {
		return 1
	}
	return 0
}

// isTerminal reports whether w is a character device (a terminal), without
// a dependency: good enough to choose indented output.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && !strings.EqualFold(os.Getenv("TERM"), "dumb")
}
