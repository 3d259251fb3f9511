package editdist

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"abc", "abc", 0},
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"status", "stauts", 2},
		{"sessionId", "sessionIds", 1},
		{"listSession", "listSessions", 1},
		{"Status", "status", 1}, // case counts: Closest folds it first
		{"é", "e", 2},           // bytes, not runes
	} {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	methods := []string{"listSessions", "canResume", "reclaimStale", "forceResume", "status"}
	for _, tt := range []struct {
		s     string
		limit int
		want  string
	}{
		{"listsessions", 4, "listSessions"},
		{"LISTSESSIONS", 4, "listSessions"},
		{"canresum", 4, "canResume"},
		{"stat", 4, "status"},
		{"stat", 2, ""},                     // 2 edits: not under the limit
		{"xyz", 4, ""},                      // near nothing
		{"", 4, ""},                         // "status" is 6 away
		{"ſtatus", 4, "status"},             // equal ignoring case, whatever the bytes
		{strings.Repeat("x", 1<<20), 4, ""}, // far longer than any: not measured
	} {
		if got := Closest(tt.s, methods, tt.limit); got != tt.want {
			t.Errorf("Closest(%.20q, %d) = %q, want %q", tt.s, tt.limit, got, tt.want)
		}
	}
	if got := Closest("ab", []string{"ax", "ay"}, 3); got != "ax" {
		t.Errorf("a tie went to %q, want the first, ax", got)
	}
}

// TestClosestHugeCostsNothing: an 8 MB name a client sent is neither
// measured nor copied (issue 16), whatever its case.
func TestClosestHugeCostsNothing(t *testing.T) {
	methods := []string{"listSessions", "canResume", "reclaimStale", "forceResume", "status"}
	huge := strings.Repeat("X", 8<<20)
	if n := testing.AllocsPerRun(10, func() { Closest(huge, methods, 4) }); n != 0 {
		t.Errorf("Closest of an 8 MB string allocates %v times, want 0", n)
	}
}
