package main

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

	"github.com/copilot-ide/sessionlocks/rpc"
)

func init() {
	register("call", command{
		summary: "run one JSON-RPC request in-process and print the result",
		run:     runCall,
	})
}

func runCall(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("call", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sessionlocks call [flags] METHOD [PARAMS-JSON | -]")
		fmt.Fprintln(stderr, "\nRuns one request through the same codec and handler as serve and prints the")
		fmt.Fprintln(stderr, "result as JSON (indented on a terminal). An error goes to stderr, exit status 1.")
		fmt.Fprintln(stderr, "PARAMS-JSON \"-\" reads the params from stdin.")
		fmt.Fprintln(stderr, "\nmethods:")
		for _, m := range rpc.Methods {
			fmt.Fprintf(stderr, "  %-13s %s\n", m.Name, m.Summary)
		}
		fmt.Fprintln(stderr, "\nflags:")
		fs.PrintDefaults()
	}
	var ef engineFlags
	ef.register(fs)
	logLevel := fs.String("log-level", "warn", "debug, info, warn or error (logs go to stderr)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case len(pos) == 0:
		fs.Usage()
		return 2
	case len(pos) > 2:
		fmt.Fprintf(stderr, "sessionlocks call: want METHOD and at most one PARAMS-JSON argument, got %d arguments (quote the JSON); see sessionlocks call -h\n", len(pos))
		return 2
	}
	method := pos[0]
	var params json.RawMessage
	if len(pos) == 2 {
		params = json.RawMessage(pos[1])
		if pos[1] == "-" {
			b, err := io.ReadAll(os.Stdin)
			if err != nil {
				fmt.Fprintln(stderr, "sessionlocks call: reading params from stdin:", err)
				return 2
			}
			params = bytes.TrimSpace(b)
		}
		if !json.Valid(params) {
			fmt.Fprintf(stderr, "sessionlocks call: params are not valid JSON: %s\n", params)
			return 2
		}
	}
	log, closeLog, err := newLogger(*logLevel, "", stderr)
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
