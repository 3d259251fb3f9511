//go:build realcli && linux

package realcli_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/copilot-ide/sessionlocks/internal/realcli"
)

var update = flag.Bool("update", false, "rewrite testdata/realcli/layout-"+realcli.Version+".txt from the real CLI")

// layoutComment heads the recorded layout file.
const layoutComment = `Directory layout the real GitHub Copilot CLI %s (%s) leaves under $HOME/.copilot
after ` + "`copilot -p hi --allow-all-tools`" + ` with HOME=<tmp> COPILOT_OFFLINE=true and an unanswering
loopback provider: names, types, permissions (umask 022) and sizes, never content.
Recorded by ` + "`go test -tags realcli -run TestLayout -update ./internal/realcli/`" + `.
[live]: once the CLI has locked its session and sent its first model request.
[sigkill]: the same tree after SIGKILL of the CLI's process group.
Placeholders: <uuid> session id, <pid> process id, <ms> milliseconds since the epoch.
Sizes of workspace.yaml, events.jsonl, logs and the database vary with content and timing;
TestLayout compares names, types and permissions under session-state/, and the sizes of
the empty lock files.`

// TestLayout records the layout of the CLI's files and compares it with the
// fixture the engine's unit tests are built on.
func TestLayout(t *testing.T) {
	env := newEnv(t)
	p, h := startCLI(t, env, "", "hi") // returns once the CLI has asked the model
	root := filepath.Join(env.Home, ".copilot")
	live := record(t, root)
	killCLI(t, p, h)
	killed := record(t, root)

	if b, err := os.ReadFile(h.Lock); err != nil || string(b) != fmt.Sprintf("%d\n", p.PID) {
		t.Errorf("inuse.<pid>.lock holds %q (%v), want \"<pid>\\n\"", b, err)
	}
	if !sameNames(live, killed) {
		t.Errorf("SIGKILL changed the layout:\n live: %v\n killed: %v", paths(live), paths(killed))
	}

	file := layoutFile
	if *update {
		var b bytes.Buffer
		comment := fmt.Sprintf(layoutComment, realcli.Version, runtime.GOOS+"-"+runtime.GOARCH)
		if err := realcli.WriteLayout(&b, comment, realcli.Section{Name: "live", Entries: live}, realcli.Section{Name: "sigkill", Entries: killed}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", file)
		return
	}
	want := readLayout(t)
	for _, sec := range []realcli.Section{{Name: "live", Entries: live}, {Name: "sigkill", Entries: killed}} {
		got, exp := sessionState(sec.Entries), sessionState(want[sec.Name])
		if d := diffLayout(got, exp); d != "" {
			t.Errorf("[%s] session-state layout differs from %s (run with -update if the CLI changed on purpose):\n%s", sec.Name, file, d)
		}
	}
}

// record snapshots root, dropping the CLI's atomic-write temporaries
// (workspace.yaml.tmp.<uuid>), which come and go.
func record(t *testing.T, root string) []realcli.Entry {
	t.Helper()
	es, err := realcli.Record(root)
	if err != nil {
		t.Fatal(err)
	}
	out := es[:0]
	for _, e := range es {
		if !strings.Contains(e.Path, ".tmp.") {
			out = append(out, e)
		}
	}
	return out
}

func paths(es []realcli.Entry) []string {
	var ps []string
	for _, e := range es {
		ps = append(ps, e.Path)
	}
	return ps
}

func sameNames(a, b []realcli.Entry) bool {
	return strings.Join(paths(a), "\n") == strings.Join(paths(b), "\n")
}

func sessionState(es []realcli.Entry) map[string]realcli.Entry {
	m := map[string]realcli.Entry{}
	for _, e := range es {
		if strings.HasPrefix(e.Path, "session-state/") {
			m[e.Path] = e
		}
	}
	return m
}

// diffLayout compares names, types and permissions, and sizes of files that
// are empty by design (locks, holds).
func diffLayout(got, want map[string]realcli.Entry) string {
	var lines []string
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			lines = append(lines, "missing: "+w.String())
		case g.Type != w.Type || g.Perm != w.Perm || (w.Size == 0 && g.Size != 0):
			lines = append(lines, fmt.Sprintf("changed: %s -> %s", w, g))
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			lines = append(lines, "new:     "+g.String())
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
