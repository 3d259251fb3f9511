package rpc

// Params are decoded strictly, by hand: encoding/json matches member names
// case-insensitively, so {"sessionID": ...} would silently fill SessionID,
// and its errors do not say which element of an array was wrong. Here every
// member name must match a json tag exactly, every field without omitempty
// is required (as in the generated schema), and each error names the path of
// the offending value.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/copilot-ide/sessionlocks/internal/editdist"
	"github.com/sourcegraph/jsonrpc2"
)

// paramsError is a -32602 answer naming the offending parameter.
func paramsError(field, format string, args ...any) *jsonrpc2.Error {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	e := &jsonrpc2.Error{Code: CodeInvalidParams, Message: "invalid params: " + msg}
	if field != "" {
		e.SetError(ErrorData{Field: field})
	}
	return e
}

// decodeParams decodes raw (absent, null or an object) into v, a pointer to a struct.
func decodeParams(raw *json.RawMessage, v any) error {
	data := []byte("{}")
	if raw != nil && string(bytes.TrimSpace(*raw)) != "null" {
		data = *raw
	}
	if k := jsonKind(data); k != "object" {
		return paramsError("", "params must be an object of named parameters, got %s", k)
	}
	return decodeValue("", data, reflect.ValueOf(v).Elem())
}

type fieldInfo struct {
	name     string
	index    int
	required bool
}

var fieldCache sync.Map // reflect.Type -> []fieldInfo

func structFields(t reflect.Type) []fieldInfo {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]fieldInfo)
	}
	var fields []fieldInfo
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		omit := false
		for _, o := range strings.Split(opts, ",") {
			omit = omit || o == "omitempty" || o == "omitzero"
		}
		fields = append(fields, fieldInfo{name: name, index: i, required: !omit})
	}
	fieldCache.Store(t, fields)
	return fields
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func decodeValue(path string, raw json.RawMessage, v reflect.Value) error {
	kind := jsonKind(raw)
	if kind == "null" {
		return nil // null is absence; required fields are checked by the caller
	}
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		v.SetBytes(append([]byte(nil), raw...))
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := decodeValue(path, raw, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.String:
		var s string
		if kind != "string" || json.Unmarshal(raw, &s) != nil {
			return paramsError(path, "want a string, got %s", describe(raw))
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		if kind != "boolean" {
			return paramsError(path, "want true or false, got %s", describe(raw))
		}
		v.SetBool(string(raw) == "true")
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if kind != "number" || err != nil || v.OverflowInt(n) {
			return paramsError(path, "want an integer, got %s", describe(raw))
		}
		v.SetInt(n)
		return nil
	case reflect.Slice:
		var elems []json.RawMessage
		if kind != "array" || json.Unmarshal(raw, &elems) != nil {
			return paramsError(path, "want an array, got %s", describe(raw))
		}
		s := reflect.MakeSlice(v.Type(), len(elems), len(elems))
		for i, e := range elems {
			p := fmt.Sprintf("%s[%d]", path, i)
			if jsonKind(e) == "null" {
				return paramsError(p, "want %s, got null", want(v.Type().Elem()))
			}
			if err := decodeValue(p, e, s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Struct:
		var members map[string]json.RawMessage
		if kind != "object" || json.Unmarshal(raw, &members) != nil {
			return paramsError(path, "want an object, got %s", describe(raw))
		}
		fields := structFields(v.Type())
		byName := make(map[string]fieldInfo, len(fields))
		for _, f := range fields {
			byName[f.name] = f
		}
		names := make([]string, 0, len(members))
		for name := range members {
			names = append(names, name)
		}
		sort.Strings(names) // one deterministic error when several are wrong
		for _, name := range names {
			f, ok := byName[name]
			if !ok {
				return unknownMember(path, name, fields)
			}
			if err := decodeValue(join(path, name), members[name], v.Field(f.index)); err != nil {
				return err
			}
		}
		for _, f := range fields {
			if raw, ok := members[f.name]; f.required && (!ok || jsonKind(raw) == "null") {
				return paramsError(join(path, f.name), "required, but missing")
			}
		}
		return nil
	}
	return paramsError(path, "unsupported parameter type %s", v.Type())
}

func unknownMember(path, name string, fields []fieldInfo) error {
	known := make([]string, len(fields))
	for i, f := range fields {
		known[i] = f.name
	}
	hint := "this method takes no parameters"
	if len(known) > 0 {
		hint = "known: " + strings.Join(known, ", ")
	}
	if best := editdist.Closest(name, known, 3); best != "" {
		hint = fmt.Sprintf("did you mean %q?", best)
	}
	return paramsError(join(path, clipString(name, maxEcho)), "unknown parameter (%s)", hint)
}

func want(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Slice:
		return "an array"
	}
	return "an object"
}

// describe names a JSON value for an error message, with the value itself when short.
func describe(raw []byte) string {
	k := jsonKind(raw)
	switch k {
	case "object", "array", "null":
		return k
	}
	return k + " " + short(raw)
}
