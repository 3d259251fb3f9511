package rpc

// Params are decoded member by member: encoding/json alone matches member
// names case-insensitively ({"sessionID": ...} would fill SessionID) and its
// errors say neither which element of an array was wrong nor what was sent.
// Here names match json tags exactly, fields without omitempty are required
// (as in the schema), and each error names the offending value's path.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/copilot-ide/sessionlocks/internal/editdist"
)

// paramsError is a -32602 answer naming the offending parameter.
func paramsError(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if field == "" {
		return newError(CodeInvalidParams, "invalid params: "+msg, nil)
	}
	return newError(CodeInvalidParams, "invalid params: "+field+": "+msg, &ErrorData{Field: field})
}

// decodeParams decodes raw (absent, null or an object) into v, a pointer to a struct.
func decodeParams(raw *json.RawMessage, v any) error {
	data := []byte("{}")
	if raw != nil && string(bytes.TrimSpace(*raw)) != "null" {
		data = *raw
	}
	var members map[string]json.RawMessage
	if k := jsonKind(data); k != "object" || json.Unmarshal(data, &members) != nil {
		return paramsError("", "params must be an object of named parameters, got %s", k)
	}
	rv := reflect.ValueOf(v).Elem()
	var names []string // the fields' member names, in field order
	required := map[string]bool{}
	for i := range rv.NumField() {
		name, opts, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
		names = append(names, name)
		required[name] = !strings.Contains(opts, "omit")
	}
	// Sorted: one deterministic error when several members are wrong.
	for _, name := range slices.Sorted(maps.Keys(members)) {
		i := slices.Index(names, name)
		if i < 0 {
			return unknownMember(name, names)
		}
		if err := decodeValue(name, members[name], rv.Field(i)); err != nil {
			return err
		}
	}
	for _, name := range names {
		if k := jsonKind(members[name]); required[name] && (k == "nothing" || k == "null") {
			return paramsError(name, "required, but missing")
		}
	}
	return nil
}

// decodeValue decodes one member's value (raw, valid JSON) into v; null is
// absence.
func decodeValue(path string, raw json.RawMessage, v reflect.Value) error {
	if jsonKind(raw) == "null" {
		return nil
	}
	if v.Kind() != reflect.Slice || v.Type() == reflect.TypeFor[json.RawMessage]() {
		if json.Unmarshal(raw, v.Addr().Interface()) != nil {
			return paramsError(path, "want %s, got %s", want(v.Type()), describe(raw))
		}
		return nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil {
		return paramsError(path, "want an array, got %s", describe(raw))
	}
	s := reflect.MakeSlice(v.Type(), len(elems), len(elems))
	for i, e := range elems {
		if jsonKind(e) == "null" || json.Unmarshal(e, s.Index(i).Addr().Interface()) != nil {
			return paramsError(fmt.Sprintf("%s[%d]", path, i), "want %s, got %s", want(v.Type().Elem()), describe(e))
		}
	}
	v.Set(s)
	return nil
}

func unknownMember(name string, known []string) error {
	hint := "this method takes no parameters"
	if len(known) > 0 {
		hint = "known: " + strings.Join(known, ", ")
	}
	if best := editdist.Closest(name, known, 3); best != "" {
		hint = fmt.Sprintf("did you mean %q?", best)
	}
	return paramsError(clipString(name, maxEcho), "unknown parameter (%s)", hint)
}

// want names the JSON a Go type takes, for an error message.
func want(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		return want(t.Elem())
	}
	return cmp.Or(wants[t.Kind()], "an object")
}

var wants = map[reflect.Kind]string{reflect.String: "a string", reflect.Bool: "true or false", reflect.Slice: "an array",
	reflect.Int: "an integer", reflect.Int64: "an integer", reflect.Int32: "an integer"}

// describe names a JSON value for an error message, with the value itself when short.
func describe(raw []byte) string {
	k := jsonKind(raw)
	if k == "object" || k == "array" || k == "null" {
		return k
	}
	return k + " " + short(raw)
}
