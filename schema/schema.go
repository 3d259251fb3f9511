// Package schema holds the sessionlocks protocol's machine-readable
// description: an OpenRPC document and a JSON Schema of every params, result
// and notification type. Both are generated from the rpc package's method
// table and Go types by `make schema` (the generator in schema/gen), committed,
// and embedded here so that the binary can serve them (rpc.discover,
// `sessionlocks schema`) without reading any file at run time.
//
// This package embeds bytes and nothing else: rpc imports it, and the
// generator imports rpc, so it must not import rpc back.
package schema

import _ "embed"

// OpenRPC is the OpenRPC 1.x document describing every method, its params,
// result and errors, and the sessionsChanged notification.
//
//go:embed openrpc.json
var OpenRPC []byte

// JSONSchema is a JSON Schema (draft 2020-12) with every wire type under $defs.
//
//go:embed sessionlocks.schema.json
var JSONSchema []byte

// Files names the committed files, relative to this directory, and their
// embedded contents; the generator's drift test walks it.
var Files = map[string][]byte{
	"openrpc.json":             OpenRPC,
	"sessionlocks.schema.json": JSONSchema,
}
