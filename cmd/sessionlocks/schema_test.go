package main

// `sessionlocks schema` prints the documents built into the binary.

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/copilot-ide/sessionlocks/schema"
)

func TestSchemaCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []byte
		key  string // a top-level member the document must have
	}{
		{nil, schema.OpenRPC, "openrpc"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"schema"}, tc.args...), &stdout, &stderr); code != 0 {
			t.Fatalf("schema %v: exit %d: %s", tc.args, code, stderr.String())
		}
		if !bytes.Equal(stdout.Bytes(), tc.want) {
			t.Errorf("schema %v: output differs from the embedded document", tc.args)
		}
		var doc map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
			t.Fatalf("schema %v: %v", tc.args, err)
		}
		if _, ok := doc[tc.key]; !ok {
			t.Errorf("schema %v: no %q member", tc.args, tc.key)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"schema", "extra"}, &stdout, &stderr); code != 2 {
		t.Errorf("schema extra: exit %d, want 2", code)
	}
}
