// Package rpc is the JSON-RPC 2.0 surface of sessionlocks over
// github.com/sourcegraph/jsonrpc2: the wire types and method table, a codec
// hardened against bad input under jsonrpc2's Conn, the server the IDE
// spawns over stdio, and a client for `sessionlocks call`, the REPL and tests.
package rpc
