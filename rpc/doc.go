// Package rpc is the JSON-RPC 2.0 surface of sessionlocks over
// github.com/sourcegraph/jsonrpc2: the wire types (protocol.go, errors.go)
// and the method table (table.go); the codec under jsonrpc2's Conn, which
// detects Content-Length or newline-delimited framing and answers what
// never parses (stream.go, framing.go, validate.go); the server the IDE
// spawns over stdio (server.go, dispatch.go, methods.go, params.go), with
// the mapping of engine types and errors to wire types (convert.go); and a
// client for `sessionlocks call`, the REPL and tests (client.go).
package rpc
