package sessionlocks

import (
	"slices"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v4"
)

// flatCases are the styles the CLI writes and their edges: fast says
// whether parseFlat must read the file itself (else it must fall back), and
// checkFlat holds whatever it reads to YAML's answer.
var flatCases = []struct {
	name, in string
	fast     bool
	want     string // the name, when fast
}{
	{"cli 1.0.102", "id: 0f8fad5b-d9cb-469f-a165-70867728950e\ncwd: /home/dev/src\nclient_name: cli\nname: Refactor the parser\nuser_named: false\nsummary_count: 2\nfork_count: 0\ncreated_at: 2026-11-20T10:00:00.000Z\nupdated_at: 2026-11-21T10:00:00.123Z\n", true, "Refactor the parser"},
	{"old keys, CRLF", "id: x\r\nsummary: Old style\r\ngit_root: /src/repo\r\nrepository: owner/repo\r\nbranch: main\r\n", true, ""},
	{"single-quoted", "name: 'fix: the bug'\n", true, "fix: the bug"},
	{"single-quoted doubled quote", "name: 'don''t: ''x'''\n", true, "don't: 'x'"},
	{"single-quoted empty", "name: ''\n", true, ""},
	{"single-quoted backslash", `name: 'C:\Users\me'` + "\n", true, `C:\Users\me`},
	{"single-quoted comment", "name: 'a # b' # note\n", true, "a # b"},
	{"single-quoted tab comment", "name: 'a'\t# note\n", true, "a"},
	{"single-quoted trailing blanks CRLF", "name: 'a'  \r\n", true, "a"},
	{"single-quoted utf-8", "name: 'caf\u00e9 \U0001F600'\n", true, "caf\u00e9 \U0001F600"},
	{"single-quoted NEL", "name: 'a\u0085b'\n", false, ""},
	{"single-quoted invalid utf-8", "name: 'a\xffb'\n", false, ""},
	{"single-quoted multi-line", "name: 'a\n  b'\n", false, ""},
	{"single-quoted unterminated", "name: 'a\n", false, ""},
	{"single-quoted then text", "name: 'a' b\n", false, ""},
	{"single-quoted comment without blank", "name: 'a'#b\n", false, ""},
	{"double-quoted", "name: \"fix: the bug\"\n", true, "fix: the bug"},
	{"double-quoted escapes", `name: "fix: the \"bug\" \\ \/ \t\n\r\0\a\b\e\f\v\ "` + "\n", true, "fix: the \"bug\" \\ / \t\n\r\x00\a\b\x1b\f\v "},
	{"double-quoted unicode escapes", `name: "\x41\u00e9\U0001F600\N\_\L\P"` + "\n", true, "A\u00e9\U0001F600\u0085\u00a0\u2028\u2029"},
	{"double-quoted escaped tab", "name: \"a\\\tb\"\n", true, "a\tb"},
	{"double-quoted empty", "name: \"\"\n", true, ""},
	{"double-quoted comment", "name: \"a\" # note\n", true, "a"},
	{"double-quoted surrogate", `name: "\uD800"` + "\n", false, ""},
	{"double-quoted beyond unicode", `name: "\U00110000"` + "\n", false, ""},
	{"double-quoted unknown escape", `name: "\q"` + "\n", false, ""},
	{"double-quoted short hex", `name: "\x4"` + "\n", false, ""},
	{"double-quoted line continuation", "name: \"a\\\n  b\"\n", false, ""},
	{"double-quoted multi-line", "name: \"a\n  b\"\n", false, ""},
	{"yes", "name: yes\n", true, "yes"},
	{"No", "name: No\n", true, "No"},
	{"on", "name: on\n", true, "on"},
	{"true", "name: true\n", true, "true"},
	{"int", "name: 12\n", true, "12"},
	{"float", "name: 1.5e3\n", true, "1.5e3"},
	{"hex", "name: 0x1F\n", true, "0x1F"},
	{"date", "name: 2026-11-21\n", true, "2026-11-21"},
	{"null", "name: null\n", true, ""},
	{"tilde", "name: ~\n", true, ""},
	{"empty", "name:\n", true, ""},
	{"plain comment", "name: a b # note\n", true, "a b"},
	{"plain trailing blanks", "name: a b \t \n", true, "a b"},
	{"plain with hash", "name: a#b\n", true, "a#b"},
	{"plain with colon", "name: Fix: the bug\n", false, ""},
	{"plain colon last", "name: a:\n", false, ""},
	{"merge key", "name: <<\n", false, ""},
	{"duplicate key", "name: x\nname: y\n", false, ""},
	{"windows path", "cwd: C:\\Users\\me\n", true, ""},
	{"nested", "  name: nested\n", false, ""},
	{"flow", "name: [a, b]\n", false, ""},
	{"document marker", "---\nname: doc\n", false, ""},
	{"plain utf-8", "name: caf\u00e9\n", false, ""},
	{"plain tab inside", "name: a\tb\n", true, "a\tb"},
}

func TestParseFlat(t *testing.T) {
	for _, tc := range flatCases {
		t.Run(tc.name, func(t *testing.T) {
			checkFlat(t, []byte(tc.in))
			m, ok := parseFlat([]byte(tc.in))
			if ok != tc.fast {
				t.Fatalf("parseFlat(%q): ok=%v, want %v", tc.in, ok, tc.fast)
			}
			if ok && m.Name != tc.want {
				t.Fatalf("parseFlat(%q): name %q, want %q", tc.in, m.Name, tc.want)
			}
		})
	}
}

// FuzzFlatYAML holds the fast path to the YAML parser: whatever it accepts,
// YAML must read the same way.
func FuzzFlatYAML(f *testing.F) {
	for _, tc := range flatCases {
		f.Add([]byte(tc.in))
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

// BenchmarkParseMetadata is one workspace.yaml as each CLI version writes
// its name: the per-file share of a cold listing.
func BenchmarkParseMetadata(b *testing.B) {
	const head = "id: 0f8fad5b-d9cb-469f-a165-70867728950e\ncwd: /home/dev/src/project-7\nclient_name: cli\n"
	const tail = "user_named: false\nsummary_count: 2\nfork_count: 0\ncreated_at: 2026-11-20T10:00:00.000Z\nupdated_at: 2026-11-21T10:00:00.123Z\n"
	for _, tc := range []struct{ name, line string }{
		{"plain", "name: Refactor the parser 12\n"},
		{"single-quoted", "name: 'fix: the parser (session 12)'\n"},
		{"single-quoted-doubled", "name: 'don''t: retry the parser (session 12)'\n"},
		{"double-quoted", `name: "fix: the \"parser\" (session 12)"` + "\n"},
	} {
		in := []byte(head + tc.line + tail)
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if m, err := parseMetadata(in); err != nil || m.Name == "" {
					b.Fatal(m, err)
				}
			}
		})
	}
}
