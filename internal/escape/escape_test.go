package escape

import (
	"encoding/json"
	"testing"
)

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"fix the parser":                 "fix the parser",
		`C:\Users\dev\src`:               `C:\Users\dev\src`,
		"日本語のセッション":                      "日本語のセッション",
		"\x1b]0;pwned\x07\x1b[2J":        `\x1b]0;pwned\a\x1b[2J`,
		"name\u202etxt.exe":              `name\u202etxt.exe`,
		"a\u009b31mb":                    `a\u009b31mb`,
		"line one\nline two\ttab\r":      `line one\nline two\ttab\r`,
		"zero\u200bwidth\ufeff\u2066iso": `zero\u200bwidth\ufeff\u2066iso`,
		"del\x7f":                        `del\x7f`,
		"bad \xff byte":                  `bad \xff byte`,
		"a real \ufffd stays":            "a real \ufffd stays",
		"tag \U000E0041":                 `tag \U000e0041`,
		"sep\u2028arated":                `sep\u2028arated`,
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJSON(t *testing.T) {
	v := map[string]string{"name": "\x1b[2J\u009b\u202e\u200b\U000E0041 ok \\ \"q\""}
	b, _ := json.Marshal(v)
	got := JSON(b)
	for _, r := range string(got) {
		if hidden(r) {
			t.Fatalf("%q still holds %U raw", got, r)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["name"] != v["name"] {
		t.Fatalf("not the same JSON any more: %q -> %q (%v)", got, back["name"], err)
	}
	if plain := []byte(`{"a":"b","c":[1,2]}`); string(JSON(plain)) != string(plain) {
		t.Error("plain JSON changed")
	}
}
