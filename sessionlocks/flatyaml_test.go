package sessionlocks

import (
	"slices"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v4"
)

var flatSeeds = []string{
	"id: 0f8fad5b-d9cb-469f-a165-70867728950e\ncwd: /home/dev/src\nclient_name: cli\nname: Refactor the parser\nuser_named: false\nsummary_count: 2\nfork_count: 0\ncreated_at: 2026-11-20T10:00:00.000Z\nupdated_at: 2026-11-21T10:00:00.123Z\n",
	"id: x\r\nsummary: Old style\r\ngit_root: /src/repo\r\nrepository: owner/repo\r\nbranch: main\r\n",
	"name: \"Fix: the bug\"\n",
	"name: Fix: the bug\n",
	"name: a #comment\n",
	"name: true\n",
	"name: 12\n",
	"name:\n",
	"name: x\nname: y\n",
	"cwd: C:\\Users\\me\n",
	"  name: nested\n",
	"name: [a, b]\n",
	"---\nname: doc\n",
	"name: 2026-11-21\n",
	"name: café\n",
	"name: a\tb\n",
}

func TestParseFlatMatchesYAML(t *testing.T) {
	for _, s := range flatSeeds {
		t.Run(s, func(t *testing.T) { checkFlat(t, []byte(s)) })
	}
	m, ok := parseFlat([]byte(flatSeeds[0]))
	if !ok || m.Name != "Refactor the parser" || m.UpdatedAt != "2026-11-21T10:00:00.123Z" {
		t.Fatalf("the CLI's own format must take the fast path: ok=%v %+v", ok, m)
	}
}

// FuzzFlatYAML holds the fast path to the YAML parser: whatever it accepts,
// YAML must read the same way.
func FuzzFlatYAML(f *testing.F) {
	for _, s := range flatSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkFlat(t, b) })
}

func checkFlat(t *testing.T, b []byte) {
	fast, ok := parseFlat(b)
	if !ok {
		return
	}
	var slow metadata
	if err := yaml.Unmarshal(b, &slow); err != nil {
		t.Fatalf("fast path accepted what YAML rejects (%v): %q", err, b)
	}
	slow.created, slow.updated = fast.created, fast.updated // derived later, not parsed
	if fast != slow {
		t.Fatalf("fast path differs from YAML on %q:\nfast %+v\nyaml %+v", b, fast, slow)
	}
}

func TestSortSessions(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for n := range 40 {
		ss := make([]Session, n)
		for i := range ss {
			// A fixed scramble with ties, so ids break some of them.
			ss[i] = Session{ID: string(rune('a' + (i*7)%26)), UpdatedAt: base.Add(time.Duration((i*13)%9) * time.Hour)}
		}
		want := slices.Clone(ss)
		slices.SortStableFunc(want, func(a, b Session) int {
			if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
		got := sortSessions(ss)
		for i := range got {
			if got[i].ID != want[i].ID || !got[i].UpdatedAt.Equal(want[i].UpdatedAt) {
				t.Fatalf("n=%d: position %d is %s@%v, want %s@%v", n, i, got[i].ID, got[i].UpdatedAt, want[i].ID, want[i].UpdatedAt)
			}
		}
	}
}
