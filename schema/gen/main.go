// Command gen writes schema/openrpc.json (OpenRPC 1.3, from rpc's method,
// notification and error tables) and schema/sessionlocks.schema.json (every
// wire type, reflected with invopop/jsonschema; descriptions are rpc's doc
// comments, read here so that the binary never needs its own source). Run it
// from the module root (make schema); a test fails when the committed files
// are not what it writes.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/copilot-ide/sessionlocks/rpc"
)

const (
	modulePath = "github.com/copilot-ide/sessionlocks"

	// protocolVersion is the OpenRPC info.version: the version of the
	// contract, not of the binary (the committed document must not change
	// with every build). Bump the minor version when a method, field or error
	// code is added, the major when anything is removed or changes meaning.
	protocolVersion = "1.0.0"

	// metaSchema is how the OpenRPC spec says rpc.discover's result is
	// described: by reference to the OpenRPC meta-schema.
	metaSchema = "https://raw.githubusercontent.com/open-rpc/meta-schema/master/schema.json"
)

func main() {
	files, err := generate()
	for name, b := range files {
		if err == nil {
			err = os.WriteFile(filepath.Join("schema", name), b, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "schema/gen (run it from the module root):", err)
		os.Exit(1)
	}
}

// generate returns the files schema/ should hold, by name.
func generate() (map[string][]byte, error) {
	comments, err := docComments()
	if err != nil {
		return nil, err
	}
	defs := jsonschema.Definitions{}
	doc := openRPC{
		OpenRPC: "1.3.2",
		Info: info{
			Title:   "sessionlocks",
			Version: protocolVersion,
			Description: "JSON-RPC 2.0 over stdio between an IDE and the sessionlocks sidecar, which tells whether " +
				"GitHub Copilot CLI sessions are in use and reclaims the locks crashed sessions leave behind. " +
				"Messages are framed with Content-Length headers (LSP base protocol) or one JSON object per line; " +
				"the server answers in the framing the client used first.",
		},
		Components: components{Errors: map[string]errorObject{}},
	}
	for _, e := range rpc.ErrorCodes {
		doc.Components.Errors[e.Name] = errorObject{Code: e.Code, Message: e.Description}
	}
	if err := addMethods(&doc, defs, comments); err != nil {
		return nil, err
	}
	doc.Components.Schemas = defs
	openrpcJSON, err := encode(doc)
	if err != nil {
		return nil, err
	}
	// One set of definitions serves both files; in OpenRPC they live under
	// components/schemas.
	openrpcJSON = bytes.ReplaceAll(openrpcJSON, []byte(`"$ref": "#/$defs/`), []byte(`"$ref": "#/components/schemas/`))

	schemaJSON, err := encode(typesDocument{
		Schema:      jsonschema.Version,
		ID:          "https://" + modulePath + "/schema/sessionlocks.schema.json",
		Title:       "sessionlocks protocol types",
		Description: "Every params, result and notification type of the sessionlocks JSON-RPC protocol (see openrpc.json for the methods).",
		Defs:        defs,
	})
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"openrpc.json": openrpcJSON, "sessionlocks.schema.json": schemaJSON}, nil
}

// addMethods adds rpc's methods and notifications to doc, and their types
// (and ErrorData) to defs. Params are closed (the server rejects unknown
// fields); results and notifications are open so that a client validating
// them keeps working when a later server adds fields, as the contract allows.
func addMethods(doc *openRPC, defs jsonschema.Definitions, comments map[string]string) error {
	closed := &jsonschema.Reflector{CommentMap: comments}
	open := &jsonschema.Reflector{CommentMap: comments, AllowAdditionalProperties: true}
	for _, m := range rpc.Methods {
		params, err := addType(defs, closed, m.Params)
		if err != nil {
			return fmt.Errorf("method %s: %w", m.Name, err)
		}
		om := method{
			Name:           m.Name,
			Summary:        m.Summary,
			ParamStructure: "by-name",
			Params:         descriptors(defs[params]),
			XParams:        ref(params),
		}
		result := contentDescriptor{Name: m.Name + "Result"}
		if m.Name == rpc.MethodDiscover {
			result.Schema = &jsonschema.Schema{Ref: metaSchema}
			result.Description = "The OpenRPC document describing this server: this document."
		} else {
			name, err := addType(defs, open, m.Result)
			if err != nil {
				return fmt.Errorf("method %s: %w", m.Name, err)
			}
			result = contentDescriptor{Name: name, Schema: ref(name), Description: defs[name].Description}
		}
		om.Result = &result
		for _, e := range m.Errors {
			if _, ok := doc.Components.Errors[e.Name]; !ok {
				return fmt.Errorf("method %s: error %s (%d) is not in rpc.ErrorCodes", m.Name, e.Name, e.Code)
			}
			om.Errors = append(om.Errors, errorRef{Ref: "#/components/errors/" + e.Name})
		}
		doc.Methods = append(doc.Methods, om)
	}
	for _, n := range rpc.Notifications {
		r, sender := open, "server"
		if n.FromClient {
			r, sender = closed, "client"
		}
		params, err := addType(defs, r, n.Params)
		if err != nil {
			return fmt.Errorf("notification %s: %w", n.Name, err)
		}
		doc.Methods = append(doc.Methods, method{
			Name:           n.Name,
			Summary:        n.Summary,
			Description:    "A notification (no result, no reply), sent by the " + sender + ".",
			ParamStructure: "by-name",
			Params:         descriptors(defs[params]),
			XParams:        ref(params),
			XNotification:  true,
			XSender:        sender,
		})
	}
	_, err := addType(defs, open, reflect.TypeFor[rpc.ErrorData]())
	return err
}

// docComments reads the doc comments of rpc's types and fields, keyed as
// jsonschema's CommentMap wants them, with Go's line wrapping undone.
func docComments() (map[string]string, error) {
	r := new(jsonschema.Reflector)
	if err := r.AddGoComments(modulePath, "rpc", jsonschema.WithFullComment()); err != nil {
		return nil, fmt.Errorf("reading rpc doc comments: %w", err)
	}
	for k, v := range r.CommentMap {
		r.CommentMap[k] = unwrap(v)
	}
	return r.CommentMap, nil
}

var lineBreak = regexp.MustCompile(`([^\n])\n([^\n])`)

// unwrap joins the lines of each paragraph: doc comments are wrapped for an
// 80-column editor, schema descriptions are shown wherever a tool likes.
func unwrap(s string) string {
	return strings.TrimSpace(lineBreak.ReplaceAllString(s, "$1 $2"))
}

// addType reflects t, a named struct type, into defs and returns its
// definition's name. A name reflected twice must come out the same: two
// types of one name would otherwise silently overwrite each other.
func addType(defs jsonschema.Definitions, r *jsonschema.Reflector, t reflect.Type) (string, error) {
	for name, def := range r.ReflectFromType(t).Definitions {
		a, _ := json.Marshal(defs[name])
		b, _ := json.Marshal(def)
		if defs[name] != nil && !bytes.Equal(a, b) {
			return "", fmt.Errorf("two different types are named %s (is one used both as params and as a result?)", name)
		}
		defs[name] = def
	}
	return t.Name(), nil
}

// descriptors turns a params object's properties into OpenRPC content
// descriptors, one per named parameter, in field order.
func descriptors(s *jsonschema.Schema) []contentDescriptor {
	ds := []contentDescriptor{}
	if s.Properties == nil {
		return ds
	}
	for p := s.Properties.Oldest(); p != nil; p = p.Next() {
		// The description moves to the descriptor rather than appear twice.
		schema := *p.Value
		schema.Description = ""
		ds = append(ds, contentDescriptor{
			Name:        p.Key,
			Description: p.Value.Description,
			Required:    slices.Contains(s.Required, p.Key),
			Schema:      &schema,
		})
	}
	// OpenRPC wants the required parameters first.
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Required && !ds[j].Required })
	return ds
}

func ref(name string) *jsonschema.Schema { return &jsonschema.Schema{Ref: "#/$defs/" + name} }

func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// The OpenRPC 1.3 document, as much of it as this server uses.
type openRPC struct {
	OpenRPC    string     `json:"openrpc"`
	Info       info       `json:"info"`
	Methods    []method   `json:"methods"`
	Components components `json:"components"`
}

type info struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version"`
}

type method struct {
	Name           string              `json:"name"`
	Summary        string              `json:"summary,omitempty"`
	Description    string              `json:"description,omitempty"`
	ParamStructure string              `json:"paramStructure"`
	Params         []contentDescriptor `json:"params"`
	// A method without a result is a notification (OpenRPC 1.3).
	Result *contentDescriptor `json:"result,omitempty"`
	Errors []errorRef         `json:"errors,omitempty"`
	// XParams names the params object's type, which OpenRPC's list of
	// parameters loses; generated clients use it to name their types.
	XParams *jsonschema.Schema `json:"x-params,omitempty"`
	// XNotification marks a notification, as the OpenRPC x-notification
	// extension does (1.3 also reads a method without result as one).
	XNotification bool `json:"x-notification,omitempty"`
	// XSender says who sends a notification: "server" or "client".
	XSender string `json:"x-sender,omitempty"`
}

type contentDescriptor struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	Required    bool               `json:"required,omitempty"`
	Schema      *jsonschema.Schema `json:"schema"`
}

type errorRef struct {
	Ref string `json:"$ref"`
}

type errorObject struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

type components struct {
	Schemas jsonschema.Definitions `json:"schemas"`
	Errors  map[string]errorObject `json:"errors"`
}

type typesDocument struct {
	Schema      string                 `json:"$schema"`
	ID          string                 `json:"$id"`
	Title       string                 `json:"title"`
	Description string                 `json:"description"`
	Defs        jsonschema.Definitions `json:"$defs"`
}
