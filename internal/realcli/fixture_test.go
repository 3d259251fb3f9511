package realcli_test

// These run in plain `go test ./...`: they keep the hand-made fixture tree
// under testdata/realcli/session-state in step with the layout recorded from
// the real CLI, without needing the CLI.

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/copilot-ide/sessionlocks/internal/realcli"
)

var (
	fixtureDir = filepath.Join("..", "..", "testdata", "realcli")
	layoutFile = filepath.Join(fixtureDir, "layout-"+realcli.Version+".txt")
	// FixtureSession is the fixture's session in the 1.0.102 format (with a
	// stale lock and hold naming pid 2147483646, above Linux's pid_max, so
	// never a live process); fixtureOldSession is in an older CLI's format.
	fixtureSession    = "0f8fad5b-d9cb-469f-a165-70867728950e"
	fixtureOldSession = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
)

func readLayout(t *testing.T) map[string][]realcli.Entry {
	t.Helper()
	f, err := os.Open(layoutFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := realcli.ReadLayout(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(l["live"]) == 0 || len(l["sigkill"]) == 0 {
		t.Fatalf("%s lacks a [live] or [sigkill] section", layoutFile)
	}
	return l
}

// TestFixtureMatchesRecordedLayout: every file in the fixture is one the real
// CLI writes, of the same type, and the fixture leaves out only what git
// cannot hold (empty directories).
func TestFixtureMatchesRecordedLayout(t *testing.T) {
	recorded := map[string]realcli.Entry{}
	for _, e := range readLayout(t)["sigkill"] {
		recorded[e.Path] = e
	}
	got, err := realcli.Record(filepath.Join(fixtureDir, "session-state"))
	if err != nil {
		t.Fatal(err)
	}
	inFixture := map[string]bool{}
	for _, e := range got {
		p := "session-state/" + e.Path
		inFixture[p] = true
		r, ok := recorded[p]
		switch {
		case !ok:
			t.Errorf("fixture has %s; the real CLI does not write it", p)
		case r.Type != e.Type:
			t.Errorf("fixture %s is type %c; the real CLI's is %c", p, e.Type, r.Type)
		case r.Size == 0 && e.Size != 0:
			t.Errorf("fixture %s has %d bytes; the real CLI's is empty", p, e.Size)
		}
	}
	var missing []string
	for p, r := range recorded {
		if strings.HasPrefix(p, "session-state/") && !inFixture[p] && r.Type != 'd' {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the fixture lacks files the real CLI writes:\n  %s", strings.Join(missing, "\n  "))
	}
}

// TestFixtureLockFormat: the lock holds "<pid>\n", the hold is empty.
func TestFixtureLockFormat(t *testing.T) {
	dir := filepath.Join(fixtureDir, "session-state", fixtureSession)
	b, err := os.ReadFile(filepath.Join(dir, "inuse.2147483646.lock"))
	if err != nil || string(b) != "2147483646\n" {
		t.Errorf("fixture lock holds %q (%v), want \"2147483646\\n\"", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "inuse.2147483646.hold")); err != nil || fi.Size() != 0 {
		t.Errorf("fixture hold: %v, %v; want an empty file", fi, err)
	}
}

// workspaceKeys are the keys, in order, of the workspace.yaml the real CLI
// 1.0.102 writes once a session is named; TestLiveSession (build tag
// realcli) checks them against the real thing.
var workspaceKeys = []string{"id", "cwd", "client_name", "name", "user_named", "summary_count", "fork_count", "created_at", "updated_at"}

func yamlKeys(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		t.Fatalf("%s is not a YAML mapping", file)
	}
	var keys []string
	for i := 0; i < len(doc.Content[0].Content); i += 2 {
		keys = append(keys, doc.Content[0].Content[i].Value)
	}
	return keys
}

func TestFixtureWorkspaceKeys(t *testing.T) {
	got := yamlKeys(t, filepath.Join(fixtureDir, "session-state", fixtureSession, "workspace.yaml"))
	if strings.Join(got, ",") != strings.Join(workspaceKeys, ",") {
		t.Errorf("fixture workspace.yaml keys %v, want %v", got, workspaceKeys)
	}
	old := yamlKeys(t, filepath.Join(fixtureDir, "session-state", fixtureOldSession, "workspace.yaml"))
	for _, k := range []string{"summary", "git_root", "repository", "branch"} {
		if !contains(old, k) {
			t.Errorf("older-format fixture workspace.yaml lacks %q", k)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
