package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/copilot-ide/sessionlocks/rpc"
	"github.com/copilot-ide/sessionlocks/schema"
)

// TestCommittedFilesUpToDate fails when rpc's types, doc comments or tables
// changed without `make schema`: the committed schema/ files, and the copies
// embedded in the binary, must be what the generator writes now.
func TestCommittedFilesUpToDate(t *testing.T) {
	t.Chdir("../..") // the module root, where the generator runs
	files, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(schema.Files) {
		t.Errorf("generator writes %d files, package schema embeds %d", len(files), len(schema.Files))
	}
	for name, want := range files {
		t.Run(name, func(t *testing.T) {
			got, err := os.ReadFile(filepath.Join("schema", name))
			if err != nil {
				t.Fatalf("%v: run `make schema`", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("schema/%s is out of date with rpc/ (run `make schema`); first difference:\n%s", name, firstDiff(got, want))
			}
			if !bytes.Equal(schema.Files[name], want) {
				t.Fatalf("the embedded schema/%s differs from the generated one", name)
			}
		})
	}
}

// firstDiff shows where two files part: the line of the first differing
// byte, as committed and as generated.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	start := bytes.LastIndexByte(got[:i], '\n') + 1
	line := func(b []byte) string {
		if start > len(b) {
			return ""
		}
		b = b[start:]
		if end := bytes.IndexByte(b, '\n'); end >= 0 {
			b = b[:end]
		}
		return string(b)
	}
	return fmt.Sprintf("line %d:\n  committed: %s\n  generated: %s", bytes.Count(got[:start], []byte("\n"))+1, line(got), line(want))
}

// The document describes what the dispatcher serves: every method and
// notification of rpc's tables, every error code, and types that describe
// their fields.
func TestDocumentCoversTables(t *testing.T) {
	var doc struct {
		Methods []struct {
			Name   string `json:"name"`
			Params []struct {
				Name string `json:"name"`
			} `json:"params"`
			Result *struct {
				Schema map[string]any `json:"schema"`
			} `json:"result"`
			Errors        []map[string]string `json:"errors"`
			XNotification bool                `json:"x-notification"`
			XSender       string              `json:"x-sender"`
		} `json:"methods"`
		Components struct {
			Schemas map[string]struct {
				Description string                    `json:"description"`
				Properties  map[string]map[string]any `json:"properties"`
			} `json:"schemas"`
			Errors map[string]struct {
				Code int64 `json:"code"`
			} `json:"errors"`
		} `json:"components"`
	}
	if err := json.Unmarshal(schema.OpenRPC, &doc); err != nil {
		t.Fatalf("openrpc.json: %v", err)
	}
	byName := map[string]int{}
	for i, m := range doc.Methods {
		byName[m.Name] = i
	}
	for _, m := range rpc.Methods {
		t.Run(m.Name, func(t *testing.T) {
			i, ok := byName[m.Name]
			if !ok {
				t.Fatal("missing from openrpc.json")
			}
			dm := doc.Methods[i]
			if dm.Result == nil {
				t.Fatal("no result: it would read as a notification")
			}
			if len(dm.Errors) != len(m.Errors) {
				t.Errorf("%d errors, rpc.Methods has %d", len(dm.Errors), len(m.Errors))
			}
			if m.Params.NumField() != len(dm.Params) {
				t.Errorf("%d params, %s has %d fields", len(dm.Params), m.Params, m.Params.NumField())
			}
		})
	}
	for _, n := range rpc.Notifications {
		i, ok := byName[n.Name]
		if !ok {
			t.Errorf("notification %s missing from openrpc.json", n.Name)
			continue
		}
		dn := doc.Methods[i]
		if dn.Result != nil || !dn.XNotification {
			t.Errorf("notification %s is described as a method", n.Name)
		}
		if want := map[bool]string{false: "server", true: "client"}[n.FromClient]; dn.XSender != want {
			t.Errorf("notification %s: x-sender %q, want %q", n.Name, dn.XSender, want)
		}
	}
	for _, e := range rpc.ErrorCodes {
		if got := doc.Components.Errors[e.Name].Code; got != e.Code {
			t.Errorf("error %s: code %d in openrpc.json, %d in rpc", e.Name, got, e.Code)
		}
	}
	// Descriptions come from doc comments; a type or field without one is a
	// gap in the schema's documentation.
	for name, s := range doc.Components.Schemas {
		if s.Description == "" {
			t.Errorf("type %s has no description: give it a doc comment", name)
		}
		for prop, ps := range s.Properties {
			if d, _ := ps["description"].(string); d == "" {
				t.Errorf("field %s.%s has no description: give it a doc comment", name, prop)
			}
		}
	}
}

func TestUnwrap(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"One line.", "One line."},
		{"Wrapped\nline.\n", "Wrapped line."},
		{"First paragraph\ncontinues.\n\nSecond.", "First paragraph continues.\n\nSecond."},
	} {
		if got := unwrap(tc.in); got != tc.want {
			t.Errorf("unwrap(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
