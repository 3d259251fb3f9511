package rpc

// The method and notification tables, which the dispatcher and the schema
// generator (schema/) both walk, and the lookup of a method by name, with a
// "did you mean" for a name that is not in the table.

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/copilot-ide/sessionlocks/internal/editdist"
	"github.com/copilot-ide/sessionlocks/schema"
)

// Method describes one method of the protocol. The dispatcher and the schema
// generator both walk Methods, so adding a method is one table entry.
type Method struct {
	Name    string       // the JSON-RPC method name
	Summary string       // one sentence saying what the method does
	Params  reflect.Type // the params object's type
	Result  reflect.Type // the result's type
	// Errors are the codes the method answers with beyond -32700, -32600, -32601 and -32603, which any request may get.
	Errors []ErrorCode

	call    func(ctx context.Context, s *Server, params *json.RawMessage) (any, error)
	ordered bool // never sent after a sessionsChanged that went out while it was made (see handler.order)
	quick   bool // answers from memory at once (see inflight.quick)
}

// Notification describes one notification of the protocol.
type Notification struct {
	Name       string       // the JSON-RPC method name
	Summary    string       // one sentence saying when it is sent
	Params     reflect.Type // the params object's type
	FromClient bool         // sent by the client to the server ($/cancelRequest)
}

// Method and notification names.
const (
	MethodListSessions    = "listSessions"
	MethodCanResume       = "canResume"
	MethodReclaimStale    = "reclaimStale"
	MethodForceResume     = "forceResume"
	MethodStatus          = "status"
	MethodDiscover        = "rpc.discover"
	NotifySessionsChanged = "sessionsChanged"
	NotifyCancelRequest   = "$/cancelRequest"
)

// Methods is the method table.
var Methods = []Method{
	ordered(method(MethodListSessions,
		"Lists the sessions in the state directory with the verdict on every lock holder, newest updatedAt first; verdicts may come from the probe cache.",
		[]ErrorCode{ErrorInvalidParams, ErrorSessionNotFound, ErrorStateDir, ErrorRequestCancelled},
		(*Server).listSessions)),
	method(MethodCanResume,
		"Judges one session afresh (never from the cache) and says whether the IDE may resume it without asking.",
		[]ErrorCode{ErrorInvalidParams, ErrorSessionNotFound, ErrorStateDir, ErrorRequestCancelled},
		(*Server).canResume),
	method(MethodReclaimStale,
		"Removes the lock files of stale holders (never live or unknown ones) in the named sessions, or in all of them.",
		[]ErrorCode{ErrorInvalidParams, ErrorSessionNotFound, ErrorStateDir, ErrorFileOp, ErrorSessionBusy, ErrorRequestCancelled},
		(*Server).reclaimStale),
	method(MethodForceResume,
		"Removes the holders' lock files of one session, after the user chose to take it over; with terminate, first asks the processes proven to hold it to exit.",
		[]ErrorCode{ErrorInvalidParams, ErrorSessionNotFound, ErrorStateDir, ErrorFileOp, ErrorSessionBusy, ErrorSessionChanged, ErrorRequestCancelled},
		(*Server).forceResume),
	quick(method(MethodStatus,
		"Reports the server's version, state directory, watcher, cache and platform.",
		nil,
		(*Server).status)),
	quick(method(MethodDiscover,
		"Returns the OpenRPC document describing this protocol, as `sessionlocks schema` prints it (generated into schema/ by `make schema`).",
		nil,
		func(*Server, context.Context, *StatusParams) (*json.RawMessage, error) {
			return (*json.RawMessage)(&schema.OpenRPC), nil
		})),
}

// Notifications is the notification table.
var Notifications = []Notification{
	{
		Name:    NotifySessionsChanged,
		Summary: "Sent by the server when sessions changed state, holders or metadata, or were removed; bursts are coalesced.",
		Params:  reflect.TypeFor[SessionsChangedParams](),
	},
	{
		Name:       NotifyCancelRequest,
		Summary:    "Sent by the client to cancel a running request; the request then fails with -32800 unless it already finished.",
		Params:     reflect.TypeFor[CancelParams](),
		FromClient: true,
	},
}

func lookup(name string) *Method {
	if i := slices.IndexFunc(Methods, func(m Method) bool { return m.Name == name }); i >= 0 {
		return &Methods[i]
	}
	return nil
}

func methodNotFound(name string) *Error {
	names := make([]string, len(Methods))
	for i, m := range Methods {
		names[i] = m.Name
	}
	best := editdist.Closest(name, names, 4)
	slices.Sort(names)
	msg := fmt.Sprintf("method %q not found", clipString(name, maxEcho))
	if best != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", best)
	} else {
		msg += " (methods: " + strings.Join(names, ", ") + ")"
	}
	return newError(CodeMethodNotFound, msg, nil)
}

// ordered marks m as a method whose answer a client may rebuild its view
// of the sessions from.
func ordered(m Method) Method {
	m.ordered = true
	return m
}

func quick(m Method) Method {
	m.quick = true
	return m
}

// method builds a table entry: it decodes the params strictly into a P and
// calls f.
func method[P, R any](name, summary string, errs []ErrorCode, f func(*Server, context.Context, *P) (*R, error)) Method {
	return Method{
		Name:    name,
		Summary: summary,
		Params:  reflect.TypeFor[P](),
		Result:  reflect.TypeFor[R](),
		Errors:  errs,
		call: func(ctx context.Context, s *Server, raw *json.RawMessage) (any, error) {
			p := new(P)
			if err := decodeParams(raw, p); err != nil {
				return nil, err
			}
			return f(s, ctx, p)
		},
	}
}
