// Package rpc is the JSON-RPC 2.0 surface of sessionlocks: the wire types
// (protocol.go, errors.go) and the method table (table.go), a hardened stream
// codec that detects Content-Length or newline-delimited framing (stream.go,
// framing.go, validate.go), the server that the IDE spawns over stdio
// (server.go, dispatch.go, answer.go, methods.go), and a client for
// `sessionlocks call`, the REPL and tests (client.go).
package rpc
