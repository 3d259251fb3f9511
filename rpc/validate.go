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

	"github.com/sourcegraph/jsonrpc2"
)

// wireError is a problem with one incoming message that is answered with a
// JSON-RPC error while the stream goes on.
type wireError struct {
	id   json.RawMessage // nil means null
	code int64
	msg  string
	data *ErrorData
	skip bool // log it, do not answer
}

func (e *wireError) Error() string { return e.msg }

// check validates a message body as a JSON-RPC 2.0 request, notification or
// response before jsonrpc2 sees it, so that every problem gets an answer that
// names it instead of closing the connection.
func (s *Stream) check(body []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) || !json.Valid(body) {
			msg := "parse error: " + err.Error()
			if se != nil {
				msg = fmt.Sprintf("parse error at byte %d: %v", se.Offset, err)
			}
			if s.framing == FramingLine && strings.Contains(err.Error(), "unexpected end of JSON input") {
				msg += " (with newline-delimited JSON each message must be on a single line)"
			}
			return &wireError{code: CodeParseError, msg: msg}
		}
		if body[0] == '[' {
			var batch []json.RawMessage
			json.Unmarshal(body, &batch)
			if len(batch) == 0 {
				return &wireError{code: CodeInvalidRequest, msg: "invalid request: empty batch"}
			}
			return &wireError{code: CodeInvalidRequest, msg: fmt.Sprintf("batch requests are not supported: send each of the %d requests as a message of its own", len(batch))}
		}
		return &wireError{code: CodeInvalidRequest, msg: "invalid request: a message must be a JSON object, got " + jsonKind(body)}
	}
	if m == nil {
		return &wireError{code: CodeInvalidRequest, msg: "invalid request: a message must be a JSON object, got null"}
	}

	rawID, hasID := m["id"]
	id, idProblem := checkID(rawID, hasID)
	fail := func(format string, args ...any) error {
		return &wireError{id: id, code: CodeInvalidRequest, msg: "invalid request: " + fmt.Sprintf(format, args...)}
	}
	if v, ok := m["jsonrpc"]; !ok {
		return fail(`missing "jsonrpc": "2.0"`)
	} else if string(v) != `"2.0"` {
		return fail(`"jsonrpc" must be "2.0", got %s`, short(v))
	}
	method, isRequest := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case isRequest && (hasResult || hasError):
		return fail(`a message cannot have both "method" and "result" or "error"`)
	case isRequest:
		var name string
		if json.Unmarshal(method, &name) != nil {
			return fail(`"method" must be a string, got %s`, jsonKind(method))
		}
		if name == "" {
			return fail(`"method" must not be empty`)
		}
		if idProblem != "" {
			return fail("%s", idProblem)
		}
		if p, ok := m["params"]; ok {
			if k := jsonKind(p); k != "object" && k != "array" && k != "null" {
				return fail(`"params" must be an object or an array, got %s`, k)
			}
		}
	case hasResult || hasError:
		if !hasID || string(rawID) == "null" {
			// The peer's answer to input it could not parse. Answering an
			// answer could loop between two servers, so it is only logged.
			var e struct {
				Error *jsonrpc2.Error `json:"error"`
			}
			json.Unmarshal(body, &e)
			msg := "a response without an id"
			if e.Error != nil {
				msg = fmt.Sprintf("peer reported error %d: %s", e.Error.Code, e.Error.Message)
			}
			return &wireError{skip: true, msg: msg}
		}
		if idProblem != "" {
			return fail("%s", idProblem)
		}
		if hasResult && hasError {
			return fail(`a response cannot have both "result" and "error"`)
		}
	default:
		return fail(`missing "method"`)
	}
	return nil
}

// checkID returns the id to echo in an error reply (nil for null) and what,
// if anything, is wrong with it. jsonrpc2.ID holds a string or an integer in
// [0, 2^63), so other ids are refused rather than silently altered.
func checkID(raw json.RawMessage, present bool) (json.RawMessage, string) {
	if !present {
		return nil, ""
	}
	switch jsonKind(raw) {
	case "string":
		// Echoed through encoding/json, which writes invalid UTF-8 as
		// U+FFFD: an answer is always valid UTF-8, whatever came in.
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, `"id" is not a valid JSON string`
		}
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
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
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
	e := &jsonrpc2.Error{Code: we.code, Message: we.msg}
	if we.data != nil {
		e.SetError(we.data)
	}
	// The same member order as jsonrpc2.Response, so every reply looks alike.
	data, err := json.Marshal(struct {
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc2.Error `json:"error"`
		JSONRPC string          `json:"jsonrpc"`
	}{id, e, "2.0"})
	if err != nil {
		return err
	}
	s.log.Debug("answered invalid input", "code", we.code, "message", we.msg)
	return s.writeFrame(data)
}
