package repl

// Parsing what is typed, completion, colour and .help, against the built-in schema.

import (
	"strings"
	"testing"
)

var testIDs = []string{
	"5e55c0de-7a1e-4b1d-9c3a-1f2e3d4c5b6a",
	"dead0b0e-4c1e-4f2a-8b3d-6e5f4a3b2c1d",
	"c0ffee00-1b2c-4d3e-8f4a-5b6c7d8e9f0a",
	"c0deba5e-9f8e-4d7c-a6b5-4c3d2e1f0a9b",
}

// testCatalog is the document the server serves, embedded in the binary.
func testCatalog(t *testing.T) *catalog {
	t.Helper()
	c := protocolCatalog()
	if c.method("canResume") == nil {
		t.Fatal("the embedded OpenRPC document has no canResume")
	}
	return c
}

func TestParse(t *testing.T) {
	p := parser{cat: testCatalog(t)}
	tests := []struct {
		line, method, params, err string
	}{
		{line: "listSessions", method: "listSessions"},
		{line: "  status  ", method: "status"},
		{line: `listSessions {"limit": 1}`, method: "listSessions", params: `{"limit": 1}`},
		{line: `listSessions{"limit":1}`, method: "listSessions", params: `{"limit":1}`},
		{line: "listSessions {\n \"limit\": 1\n}", method: "listSessions", params: "{\n \"limit\": 1\n}"},
		{line: `canResume {"sessionId": "5e55"}`, method: "canResume", params: `{"sessionId": "5e55"}`}, // raw JSON is sent as typed
		{line: "canResume 5e55", method: "canResume", params: `{"sessionId":"5e55"}`},                   // the server resolves a prefix
		{line: "canResume 5e55c0de-7a1e-4b1d-9c3a-1f2e3d4c5b6a", method: "canResume", params: `{"sessionId":"5e55c0de-7a1e-4b1d-9c3a-1f2e3d4c5b6a"}`},
		{line: "canResume ffff", method: "canResume", params: `{"sessionId":"ffff"}`}, // unknown: the server decides
		{line: "canResume 1e5", method: "canResume", params: `{"sessionId":"1e5"}`},   // a string param is never a number
		{line: "canResume c0", method: "canResume", params: `{"sessionId":"c0"}`},     // ambiguous: the server lists the candidates
		{line: `canResume sessionId="dead"`, method: "canResume", params: `{"sessionId":"dead"}`},
		{line: "canResume 'dead'", method: "canResume", params: `{"sessionId":"dead"}`},
		{line: "canResume 33333333", method: "canResume", params: `{"sessionId":"33333333"}`}, // all digits: still an id
		{line: "canResume 5e55 dead", err: "canResume takes one bare argument (sessionId)"},
		{line: "canResume 5e55 sessionId=dead", err: "sessionId given both bare and as sessionId="},
		{line: "listSessions limit=2 includeFree=false", method: "listSessions", params: `{"limit":2,"includeFree":false}`},
		{line: "listSessions ids=5e55,dead", method: "listSessions", params: `{"ids":["5e55","dead"]}`},
		{line: `listSessions ids=["c0ff", "c0de"]`, method: "listSessions", params: `{"ids":["c0ff","c0de"]}`},
		{line: "listSessions 5e55 dead", method: "listSessions", params: `{"ids":["5e55","dead"]}`},
		{line: "reclaimStale sessionIds=dead dryRun=true", method: "reclaimStale", params: `{"sessionIds":["dead"],"dryRun":true}`},
		{line: "reclaimStale dead", method: "reclaimStale", params: `{"sessionIds":["dead"]}`},
		{line: "forceResume 5e55 graceMs=soon", method: "forceResume", params: `{"sessionId":"5e55","graceMs":"soon"}`}, // the server says why not
		{line: "listSessions nosuch=1", err: `listSessions has no parameter "nosuch"`},
		{line: `listSessions {"limit": }`, err: "params are not valid JSON"},
		{line: `canResume {"sessionId": }`, err: "; type canResume <id prefix> or canResume sessionId=<id prefix>"}, // says what to type instead
		{line: "canResume 5e55 dead", err: "give the others as key=value (it takes sessionId)"},
		{line: `canResume "5e55`, err: "unterminated \" quote"},
		{line: "status now", err: "status takes no parameters"},
		{line: "frobnicate 1", err: `unknown method "frobnicate"`},
		{line: `frobnicate {"a":1}`, method: "frobnicate", params: `{"a":1}`},
		{line: "frobnicate a=1 b=x", method: "frobnicate", params: `{"a":1,"b":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			method, params, err := p.parse(tt.line)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if method != tt.method || string(params) != tt.params {
				t.Errorf("got %s %s, want %s %s", method, params, tt.method, tt.params)
			}
		})
	}
}

func TestDepth(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"listSessions", 0},
		{"listSessions {", 1},
		{`x {"a": [1, {`, 3},
		{`x {"a": "}{["}`, 0},
		{`x {"a": "\"{"`, 1},
		{"x {}", 0},
	}
	for _, tt := range tests {
		if _, got, _ := split(tt.text); got != tt.want {
			t.Errorf("depth(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

func TestComplete(t *testing.T) {
	r := &repl{cat: testCatalog(t)}
	r.answers.note(testIDs, nil)
	tests := []struct {
		line string
		want []string
	}{
		{"canR", []string{"canResume"}},
		{"re", []string{"reclaimStale"}},
		{"sessions", nil}, // a notification the server sends is not offered
		{".t", []string{".trace"}},
		{".help li", []string{"listSessions"}},
		{"canResume c0", []string{"c0deba5e-9f8e-4d7c-a6b5-4c3d2e1f0a9b", "c0ffee00-1b2c-4d3e-8f4a-5b6c7d8e9f0a"}},
		{"canResume sess", []string{"sessionId="}},
		{"canResume sessionId=de", []string{"sessionId=dead0b0e-4c1e-4f2a-8b3d-6e5f4a3b2c1d"}},
		{"listSessions ids=5e55c0de-7a1e-4b1d-9c3a-1f2e3d4c5b6a,de", []string{"ids=5e55c0de-7a1e-4b1d-9c3a-1f2e3d4c5b6a,dead0b0e-4c1e-4f2a-8b3d-6e5f4a3b2c1d"}},
		{"listSessions limit=1 l", nil},
		{"listSessions limit=1 i", []string{"ids=", "includeFree="}},
		{"reclaimStale d", []string{"dryRun=", "dead0b0e-4c1e-4f2a-8b3d-6e5f4a3b2c1d"}}, // params first
	}
	for _, tt := range tests {
		head, got, tail := r.complete(tt.line, len(tt.line))
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("complete(%q) = %q, want %q", tt.line, got, tt.want)
		}
		if !strings.HasPrefix(tt.line, head) || tail != "" {
			t.Errorf("complete(%q): head %q tail %q", tt.line, head, tail)
		}
	}
}

func TestColorJSON(t *testing.T) {
	got := colorJSON("{\n  \"a\": \"x:y\",\n  \"b\": [1.5e3, -2],\n  \"c\": null\n}\n")
	for _, want := range []string{
		"\x1b[36m\"a\"\x1b[0m: \x1b[32m\"x:y\"\x1b[0m",
		"\x1b[33m1.5e3\x1b[0m, \x1b[33m-2\x1b[0m",
		"\x1b[35mnull\x1b[0m",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("colorJSON: %q lacks %q", got, want)
		}
	}
}

func TestHelp(t *testing.T) {
	c := testCatalog(t)
	h := c.help(c.method("canResume"))
	for _, want := range []string{"canResume {sessionId}", "params:", "sessionId  string", "result: CanResumeResult", "message", "example: canResume <id prefix>"} {
		if !strings.Contains(h, want) {
			t.Errorf(".help canResume lacks %q:\n%s", want, h)
		}
	}
	if h := c.help(c.method("listSessions")); !strings.Contains(h, "includeFree?  boolean = true") {
		t.Errorf(".help listSessions does not show the default:\n%s", h)
	}
}
