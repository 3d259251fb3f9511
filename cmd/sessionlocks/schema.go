package main

// `sessionlocks schema`: the OpenRPC document or the JSON Schema.

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
	var jsonSchema *bool
	fs := newFlags("sessionlocks schema", func(fs *flag.FlagSet) {
		w := fs.Output()
		fmt.Fprintln(w, "usage: sessionlocks schema [--json-schema]")
		fmt.Fprintln(w, "\nPrints the OpenRPC document that rpc.discover returns: every method, its params,")
		fmt.Fprintln(w, "result and errors, and the sessionsChanged notification.")
		fs.PrintDefaults()
	})
	jsonSchema = fs.Bool("json-schema", false, "print the JSON Schema of the wire types instead of the OpenRPC document")
	pos, code, done := parseFlags(fs, args, stdout, stderr)
	if done {
		return code
	}
	if noArgs("schema", pos, stderr) {
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
