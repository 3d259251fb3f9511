package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/copilot-ide/sessionlocks/schema"
)

func init() {
	register("schema", command{
		summary: "print the protocol's OpenRPC document (or its JSON Schema)",
		run:     runSchema,
	})
}

func runSchema(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sessionlocks schema", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonSchema := fs.Bool("json-schema", false, "print the JSON Schema of the wire types instead of the OpenRPC document")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sessionlocks schema [--json-schema]")
		fmt.Fprintln(stderr, "\nPrints the OpenRPC document that rpc.discover returns: every method, its params,")
		fmt.Fprintln(stderr, "result and errors, and the sessionsChanged notification.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "sessionlocks schema: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	doc := schema.OpenRPC
	if *jsonSchema {
		doc = schema.JSONSchema
	}
	if _, err := stdout.Write(doc); err != nil {
		fmt.Fprintln(stderr, "sessionlocks schema:", err)
		return 1
	}
	return 0
}
