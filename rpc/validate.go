package rpc

// Validation: a message checked as JSON-RPC 2.0 before jsonrpc2 decodes it,
// and the error reply that names what is wrong with one that is not.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// wireError is a problem with one incoming message, answered with a JSON-RPC
// error while the stream goes on.
type wireError struct {
	id   json.RawMessage // nil means null
	e    *Error
	skip bool // log it, do not answer
}

func (we *wireError) Error() string { return we.e.Message }

func badInput(code int64, msg string) *wireError { return &wireError{e: newError(code, msg, nil)} }

// check validates a message body as a JSON-RPC 2.0 request, notification or
// response before jsonrpc2 sees it, so that every problem gets an answer that
// names it instead of closing the connection.
func (s *Stream) check(body []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		// Invalid JSON fails as a *json.SyntaxError; valid JSON that is not
		// an object, as another error (null, as none).
		if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
			msg := fmt.Sprintf("parse error at byte %d: %v", se.Offset, err)
			if s.framing == FramingLine && strings.Contains(err.Error(), "unexpected end of JSON input") {
				msg += " (with newline-delimited JSON each message must be on a single line)"
			}
			return badInput(CodeParseError, msg)
		}
		if body[0] == '[' {
			var batch []json.RawMessage
			json.Unmarshal(body, &batch)
			if len(batch) == 0 {
				return badInput(CodeInvalidRequest, "invalid request: empty batch")
			}
			return badInput(CodeInvalidRequest, fmt.Sprintf("batch requests are not supported: send each of the %d requests as a message of its own", len(batch)))
		}
		return badInput(CodeInvalidRequest, "invalid request: a message must be a JSON object, got "+jsonKind(body))
	}

	rawID, hasID := m["id"]
	id, idProblem := checkID(rawID)
	fail := func(format string, args ...any) error {
		return &wireError{id: id, e: newError(CodeInvalidRequest, "invalid request: "+fmt.Sprintf(format, args...), nil)}
	}
	version, hasVersion := m["jsonrpc"]
	method, isRequest := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	var name string
	switch params := jsonKind(m["params"]); {
	case !hasVersion:
		return fail(`missing "jsonrpc": "2.0"`)
	case string(version) != `"2.0"`:
		return fail(`"jsonrpc" must be "2.0", got %s`, short(version))
	case isRequest && (hasResult || hasError):
		return fail(`a message cannot have both "method" and "result" or "error"`)
	case isRequest && json.Unmarshal(method, &name) != nil:
		return fail(`"method" must be a string, got %s`, jsonKind(method))
	case isRequest && name == "":
		return fail(`"method" must not be empty`)
	case !isRequest && !hasResult && !hasError:
		return fail(`missing "method"`)
	case !isRequest && (!hasID || string(rawID) == "null"):
		// The peer's answer to input it could not parse. Answering an answer
		// could loop between two servers, so it is only logged.
		e := &Error{Message: "a response without an id"}
		if json.Unmarshal(m["error"], e) == nil {
			e.Message = fmt.Sprintf("peer reported error %d: %s", e.Code, e.Message)
		}
		return &wireError{e: e, skip: true}
	case idProblem != "":
		return fail("%s", idProblem)
	case isRequest && params != "object" && params != "array" && params != "null" && params != "nothing":
		return fail(`"params" must be an object or an array, got %s`, params)
	case hasResult && hasError:
		return fail(`a response cannot have both "result" and "error"`)
	}
	return nil
}

// checkID returns the id to echo in an error reply (nil for null) and what,
// if anything, is wrong with it. jsonrpc2.ID holds a string or an integer in
// [0, 2^63), so other ids are refused rather than silently altered.
func checkID(raw json.RawMessage) (json.RawMessage, string) {
	switch jsonKind(raw) {
	case "nothing": // absent
		return nil, ""
	case "string":
		// Echoed through encoding/json, which writes invalid UTF-8 as
		// U+FFFD: an answer is always valid UTF-8, whatever came in.
		var s string
		json.Unmarshal(raw, &s) // valid: the whole message is
		id, _ := json.Marshal(s)
		return id, ""
	case "number":
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil && n >= 0 {
			return raw, ""
		}
		return raw, fmt.Sprintf(`"id" must be a string or a non-negative integer, got %s`, short(raw))
	case "null":
		return nil, `"id" must not be null: omit it to send a notification`
	default:
		return nil, fmt.Sprintf(`"id" must be a string or a non-negative integer, got %s`, jsonKind(raw))
	}
}

// jsonKind names the kind of a JSON value from its first byte.
func jsonKind(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	if i := strings.IndexByte(`{["tfn`, raw[0]); i >= 0 {
		return [...]string{"object", "array", "string", "boolean", "boolean", "null"}[i]
	}
	return "number"
}

// short gives a JSON value the client sent, shortened, for an error message.
func short(raw []byte) string { return clipString(string(bytes.TrimSpace(raw)), 40) }

func (s *Stream) writeError(we *wireError) error {
	id := we.id
	if id == nil {
		id = json.RawMessage("null")
	}
	// The same member order as jsonrpc2.Response, so every reply looks alike.
	data, err := json.Marshal(struct {
		ID      json.RawMessage `json:"id"`
		Error   *Error          `json:"error"`
		JSONRPC string          `json:"jsonrpc"`
	}{id, we.e, "2.0"})
	if err != nil {
		return err
	}
	s.log.Debug("answered invalid input", "code", we.e.Code, "message", we.e.Message)
	return s.writeFrame(data)
}
