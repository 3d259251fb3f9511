package rpc

// The JSON-RPC errors the server answers with: their codes, the data some
// carry, and their documentation for the schema.

import (
	"github.com/sourcegraph/jsonrpc2"
)

// Error is a JSON-RPC error object; calls made with Client return one when
// the server answers with an error.
type Error = jsonrpc2.Error

func newError(code int64, msg string, data *ErrorData) *Error {
	e := &Error{Code: code, Message: msg}
	if data != nil {
		e.SetError(data)
	}
	return e
}

// ErrorCode is one JSON-RPC error code the server answers with.
type ErrorCode struct {
	Code        int64  // the JSON-RPC error code
	Name        string // a short name for the code, for documentation and generated clients
	Description string // when the code is used and what its data holds
}

// The error codes. The first five are JSON-RPC's and LSP's own.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeRequestCancelled = -32800
	CodeSessionNotFound  = -32001
	CodeStateDir         = -32002
	CodeFileOp           = -32003
	CodeSessionBusy      = -32004
	CodeSessionChanged   = -32005
)

// The error codes with their documentation.
var (
	ErrorParse = ErrorCode{CodeParseError, "ParseError",
		"The message is not valid JSON, or its frame cannot be read: a malformed header block, a header block without Content-Length, Content-Length 0, or a JSON message where a Content-Length header was expected. The id is null; the frame is discarded and reading goes on at the next header."}
	ErrorInvalidRequest = ErrorCode{CodeInvalidRequest, "InvalidRequest",
		"The message is not a valid JSON-RPC 2.0 request, is a batch (not supported), or exceeds the size limit (it is discarded unread; data: {limit, size}). The id is the request's when it has a usable one, else null; the stream goes on."}
	ErrorMethodNotFound = ErrorCode{CodeMethodNotFound, "MethodNotFound",
		"No method of that name exists."}
	ErrorInvalidParams = ErrorCode{CodeInvalidParams, "InvalidParams",
		"A parameter is missing, unknown, of the wrong type or out of range, or a session id is not a safe single path component, or a session id prefix begins more than one session's id. The message names the parameter; data.field holds its path (for example sessionIds[2]); for an ambiguous prefix data.candidates lists the ids it begins (at most 20) and data.matches counts them all."}
	ErrorInternal = ErrorCode{CodeInternalError, "InternalError",
		"The server failed unexpectedly (a bug); the failure is logged and the server keeps running."}
	ErrorRequestCancelled = ErrorCode{CodeRequestCancelled, "RequestCancelled",
		"The request was cancelled with $/cancelRequest before it did anything. A forceResume or reclaimStale cancelled after it began to signal or remove answers with what it did instead."}
	ErrorSessionNotFound = ErrorCode{CodeSessionNotFound, "SessionNotFound",
		"No session directory has that id. data: {sessionId, stateDir}."}
	ErrorStateDir = ErrorCode{CodeStateDir, "StateDirUnreadable",
		"The state directory exists but cannot be read. data: {path, error}."}
	ErrorFileOp = ErrorCode{CodeFileOp, "FileOperationFailed",
		"A file operation failed. data: {path, op, error}."}
	ErrorSessionBusy = ErrorCode{CodeSessionBusy, "SessionBusy",
		"Another process held the session's operation lock for too long; try again."}
	ErrorSessionChanged = ErrorCode{CodeSessionChanged, "SessionChanged",
		"forceResume with expect found a live or unknown holder the expected canResume answer did not name (a CLI opened the session since): nothing was done. data: the fresh canResume answer, to ask the user again with."}
)

// ErrorCodes lists every error code the server answers with.
var ErrorCodes = []ErrorCode{
	ErrorParse, ErrorInvalidRequest, ErrorMethodNotFound, ErrorInvalidParams, ErrorInternal,
	ErrorRequestCancelled, ErrorSessionNotFound, ErrorStateDir, ErrorFileOp, ErrorSessionBusy, ErrorSessionChanged,
}

// ErrorData is the data member of the errors that carry one. Which fields are
// set depends on the code; see ErrorCodes.
type ErrorData struct {
	// Field is the path of the offending parameter (-32602), for example "sessionIds[2]".
	Field string `json:"field,omitempty"`
	// SessionID is the session that was not found (-32001).
	SessionID string `json:"sessionId,omitempty"`
	// StateDir is the state directory that was searched (-32001).
	StateDir string `json:"stateDir,omitempty"`
	// Path is the file or directory the failed operation was on (-32002, -32003).
	Path string `json:"path,omitempty"`
	// Op is the failed operation, for example remove, open or lock (-32003).
	Op string `json:"op,omitempty"`
	// Error is the operating system's error message (-32002, -32003).
	Error string `json:"error,omitempty"`
	// Limit is the message size limit in bytes (-32600 for an oversize message).
	Limit int64 `json:"limit,omitempty"`
	// Size is the size of the oversize message in bytes, as far as it was read (-32600).
	Size int64 `json:"size,omitempty"`
	// Candidates are the session ids an ambiguous prefix begins, sorted, at
	// most 20 (-32602 for an ambiguous session id prefix).
	Candidates []string `json:"candidates,omitempty"`
	// Matches counts all the sessions an ambiguous prefix begins; more than
	// len(candidates) when the list was cut (-32602).
	Matches int `json:"matches,omitempty"`
}

// maxEcho bounds what an error message repeats of a name the client sent:
// enough to recognise it, not an 8 MB echo.
const maxEcho = 64

// clipString shortens s for an error message.
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
