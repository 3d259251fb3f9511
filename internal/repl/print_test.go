package repl

// The printer escapes what is not its own, with or without colour; $token and $last.

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestPrinterEscapes: with colour or without, what came from elsewhere
// reaches the terminal escaped (issue 23 item 5); the only escape
// sequences written are the printer's own colours, and JSON stays JSON.
func TestPrinterEscapes(t *testing.T) {
	hostile := "\x1b]0;pwned\x07\x1b[2J\u009b31m\u202etxt\u200b\x7f"
	raw, _ := json.Marshal(map[string]string{"name": hostile})
	sgr := regexp.MustCompile(`\x1b\[[0-9;]*m`)
	for _, color := range []bool{false, true} {
		p := &printer{color: color}
		js := p.json(raw)
		out := sgr.ReplaceAllString(js+p.line(sgrError, "error: "+hostile), "")
		for _, r := range out {
			if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
				t.Errorf("colour %v: %U raw in %q", color, r, out)
			}
		}
		var back map[string]string
		if err := json.Unmarshal([]byte(sgr.ReplaceAllString(js, "")), &back); err != nil || back["name"] != hostile {
			t.Errorf("colour %v: not the same JSON: %q (%v)", color, js, err)
		}
		if color && !strings.Contains(js, "\x1b[32m") {
			t.Errorf("not coloured: %q", js)
		}
	}
}

// TestVars: $token and $last (and a member of it) as values.
func TestVars(t *testing.T) {
	var a answers
	p := parser{cat: protocolCatalog(), vars: a.value}
	if _, _, err := p.parse("forceResume 5e55 expect=$token"); err == nil || !strings.Contains(err.Error(), "none has yet") {
		t.Errorf("$token before any token: %v", err)
	}
	a.learn(json.RawMessage(`{"sessionId":"5e55c0de","holders":[{"pid":42}],"token":"v1:42.abc"}`), true)
	a.learn(json.RawMessage(`{"sessionId":"dead0b0e","holders":[]}`), true) // no token: $token is still the last one given
	for line, want := range map[string]string{
		"forceResume 5e55 expect=$token":            `{"sessionId":"5e55","expect":"v1:42.abc"}`,
		"canResume $last.sessionId":                 `{"sessionId":"dead0b0e"}`,
		"listSessions ids=5e55 limit=$last.holders": `{"ids":["5e55"],"limit":[]}`,
	} {
		if _, params, err := p.parse(line); err != nil || string(params) != want {
			t.Errorf("%s: %s %v, want %s", line, params, err, want)
		}
	}
	if _, _, err := p.parse("canResume $last.holders.0"); err == nil {
		t.Error("$last.holders.0 of an empty list gave a value")
	}
}
