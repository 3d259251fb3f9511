package sessionlocks

import (
	"os"
	"path/filepath"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

// flatSeeds are workspace.yaml lines as CLIs write them (the first group,
// which parseFlat must read itself) and forms it must leave to the library.
var flatSeeds = []string{
	"id: 0f8fad5b-d9cb-469f-a165-70867728950e\ncwd: /home/example/project\nclient_name: github/cli\nname: placeholder session name\nuser_named: false\nsummary_count: 0\nfork_count: 0\ncreated_at: 2026-01-02T03:04:05.678Z\nupdated_at: 2026-01-02T03:04:06.789Z\n",
	"name: 'fix: the bug'\n",
	"name: 'it''s done # really'\n",
	"name: \"fix: the bug\"\n",
	"name: yes\nbranch: 2026-01-01\n",
	"name: '123'\nsummary: '~'\n",
	"cwd: C:\\Users\\you\\src\n",
	"name: Réparer le déploiement 🚀\n",
	// the library's
	"name: \"deploy: it's \\\"done\\\" # ok\"\n",
	"name: |-\n  two\n  lines\n",
	"name: a # comment\n",
	"name: null\n",
	"name: ~\n",
	"name:\n",
	"name: a\nname: b\n",
	"name: [a, b]\n",
	"  name: indented\n",
	"name: 'open\n",
	"name: a\r\n",
	"\ufeffname: bom\n",
	"---\nname: doc\n",
	"name: a: b\n",
	"name: \"a\"b\"\n",
	"name: 'a'b'\n",
	"name: tab\there\n",
}

func TestParseFlatReadsWhatTheCLIWrites(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "realcli", "session-state", "*", "workspace.yaml"))
	inputs := flatSeeds[:8]
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, string(b))
	}
	for _, in := range inputs {
		if _, ok := parseFlat([]byte(in)); !ok {
			t.Errorf("left to the library: %q", in)
		}
	}
}

// FuzzParseFlat: whatever parseFlat reads, the library reads the same.
func FuzzParseFlat(f *testing.F) {
	for _, s := range flatSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		flat, ok := parseFlat([]byte(in))
		if !ok {
			return
		}
		var lib metadata
		if err := yaml.Unmarshal([]byte(in), &lib); err != nil {
			t.Fatalf("parseFlat read %q, which the library refuses: %v", in, err)
		}
		if flat != lib {
			t.Fatalf("%q:\nflat    %+v\nlibrary %+v", in, flat, lib)
		}
	})
}
