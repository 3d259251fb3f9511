//go:build realcli && linux

package realcli_test

// The real CLI names a session after its first prompt, escapes and all: a
// pasted prompt holding a title change, a screen clear, a C1 CSI and a bidi
// override lands in workspace.yaml's name. Through the real sidecar binary,
// list, explain and call print none of them raw (issue 23 item 5).

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
	"unicode"
)

func TestEscapedPromptName(t *testing.T) {
	env := newEnv(t)
	const prompt = "fix \x1b]0;pwned\x07\x1b[2J\u009b31m\u202etxt.exe"
	_, h := startCLI(t, env, "", prompt)
	ws := workspace(t, env.SessionDir(h.SessionID))
	for ctx := ctxLong(t); ws["name"] == nil && ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		ws = workspace(t, env.SessionDir(h.SessionID))
	}
	name, _ := ws["name"].(string)
	for _, c := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
		if !strings.Contains(name, c) {
			t.Fatalf("workspace.yaml's name %q lacks %q: the CLI no longer keeps it, and this test proves nothing", name, c)
		}
	}

	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(sidecarBinary, args...)
		cmd.Env = env.Environ() // its HOME: the CLI's state dir is the default one
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sessionlocks %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if bad := rawHidden(string(out)); bad != "" {
			t.Errorf("sessionlocks %s prints %s raw:\n%s", strings.Join(args, " "), bad, out)
		}
		return string(out)
	}
	if out := run("list"); !strings.Contains(out, `fix \x1b]0;pwned\a\x1b[2J\u009b31m\u202etxt.exe`) {
		t.Errorf("list does not show the name escaped:\n%s", out)
	}
	if out := run("explain", h.SessionID); !strings.Contains(out, `"fix \x1b]0;pwned\a`) {
		t.Errorf("explain does not show the name escaped:\n%s", out)
	}
	run("explain", "--json", h.SessionID)
	run("call", "canResume", h.SessionID)
	var l struct {
		Sessions []struct{ ID, Name string }
	}
	if err := json.Unmarshal([]byte(run("list", "--json")), &l); err != nil || len(l.Sessions) != 1 || l.Sessions[0].Name != name {
		t.Errorf("list --json: %v %+v; want the name as workspace.yaml has it, %q", err, l, name)
	}
}

// rawHidden returns the characters in s that a terminal acts on or does
// not show, other than line breaks, or "" if there are none.
func rawHidden(s string) string {
	var bad []string
	for _, r := range s {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029) {
			bad = append(bad, fmt.Sprintf("%U", r))
		}
	}
	return strings.Join(bad, " ")
}
