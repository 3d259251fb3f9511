package rpc

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

func sampleSessions() []sessionlocks.Session {
	t0 := time.Date(2026, 11, 22, 10, 2, 3, 456789000, time.UTC)
	return []sessionlocks.Session{
		{ID: "a", Dir: "/s/a", Name: `quote " and <html> & é`, CWD: "/src", Repository: "r", Branch: "b", ClientName: "cli",
			CreatedAt: t0, UpdatedAt: t0.Add(time.Hour), State: sessionlocks.StateInUse, Conflict: true,
			Holders: []sessionlocks.Holder{
				{SessionID: "a", PID: 42, LockFile: "/s/a/inuse.42.lock", HoldFile: "/s/a/inuse.42.hold", Verdict: sessionlocks.Live,
					Reason: sessionlocks.ReasonHoldLocked, Detail: "held", LockWrittenAt: t0, ProbedAt: t0.Add(time.Second), Cached: true,
					WriterVerified: true, Process: &sessionlocks.Process{StartedAt: t0.Add(-time.Second), Command: "copilot --resume"}},
				{SessionID: "a", PID: 43, LockFile: "/s/a/inuse.43.lock", Verdict: sessionlocks.Stale, Reason: sessionlocks.ReasonProcessExited,
					Detail: "gone", LockWrittenAt: t0, ProbedAt: t0},
			}},
		{ID: "b", Dir: "/s/b", State: sessionlocks.StateFree},
	}
}

// TestSessionJSONMatchesMarshal holds the reused encodings to what
// json.Marshal of the wire types gives, across calls where sessions change,
// appear and vanish, and for partial lists.
func TestSessionJSONMatchesMarshal(t *testing.T) {
	var c sessionJSON
	ss := sampleSessions()
	check := func(name string, ss []sessionlocks.Session, all bool) {
		t.Helper()
		got, err := c.appendList(nil, `/state "dir"`, 7, ss, all)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(&ListSessionsResult{StateDir: `/state "dir"`, Total: 7, Sessions: wireSessions(ss)})
		if string(got) != string(want) {
			t.Fatalf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	check("first", ss, true)
	if len(c.last) == 0 || &c.last[0] != &ss[0] {
		t.Fatal("a whole listing was not remembered: its encoding cannot be reused")
	}
	check("again", ss, true) // the very slice: copied whole
	changed := sampleSessions()
	changed[0].Holders[0].Cached = false
	changed[1].Name = "renamed"
	check("changed", changed, true) // as long, not the same slice
	check("partial", changed[1:], false)
	check("changed again", changed, true)
	check("empty", nil, true)
	check("back", ss, true)
	if len(c.m) != 2 {
		t.Errorf("%d entries kept, want 2", len(c.m))
	}
}

// TestSessionJSONSeesEveryField changes each field of the engine's Session,
// Holder and Process in turn and checks that the reused encoding follows:
// a field sameSession forgot would keep showing its old value.
func TestSessionJSONSeesEveryField(t *testing.T) {
	var paths [][]int
	sessionT := reflect.TypeFor[sessionlocks.Session]()
	for i := 0; i < sessionT.NumField(); i++ {
		if sessionT.Field(i).Name != "Holders" && sessionT.Field(i).IsExported() {
			paths = append(paths, []int{i})
		}
	}
	holderT := reflect.TypeFor[sessionlocks.Holder]()
	for i := 0; i < holderT.NumField(); i++ {
		if holderT.Field(i).Name != "Process" && holderT.Field(i).IsExported() {
			paths = append(paths, []int{-1, i})
		}
	}
	processT := reflect.TypeFor[sessionlocks.Process]()
	for i := 0; i < processT.NumField(); i++ {
		if !processT.Field(i).IsExported() {
			continue
		}
		paths = append(paths, []int{-2, i})
	}
	for _, path := range paths {
		ss := sampleSessions()
		var f reflect.Value
		switch path[0] {
		case -1:
			f = reflect.ValueOf(&ss[0].Holders[0]).Elem().Field(path[1])
		case -2:
			f = reflect.ValueOf(ss[0].Holders[0].Process).Elem().Field(path[1])
		default:
			f = reflect.ValueOf(&ss[0]).Elem().Field(path[0])
		}
		name := fmt.Sprint(path, " ", f.Type())
		t.Run(name, func(t *testing.T) {
			var c sessionJSON
			before, _ := c.appendList(nil, "/s", 2, sampleSessions(), true)
			changeValue(t, f)
			want, _ := json.Marshal(&ListSessionsResult{StateDir: "/s", Total: 2, Sessions: wireSessions(ss)})
			got, _ := c.appendList(nil, "/s", 2, ss, true)
			if string(got) != string(want) {
				t.Fatalf("after the change:\n got %s\nwant %s", got, want)
			}
			if string(want) == string(before) {
				t.Logf("field does not reach the wire")
			}
		})
	}
}

func changeValue(t *testing.T, f reflect.Value) {
	switch v := f.Addr().Interface().(type) {
	case *string:
		*v += "x"
	case *int:
		*v++
	case *bool:
		*v = !*v
	case *time.Time:
		*v = v.Add(time.Millisecond)
	case *sessionlocks.State:
		*v = sessionlocks.StateUnknown
	case *sessionlocks.Verdict:
		*v = sessionlocks.Unknown
	case *sessionlocks.Reason:
		*v = sessionlocks.ReasonUnverified
	case *[]string:
		*v = append(*v, "x")
	default:
		t.Fatalf("no way to change a %T: teach changeValue, and check sameSession compares it", v)
	}
}

// TestAppendStringMatchesMarshal: appendString writes every string as
// encoding/json does, whether it takes its own path or hands over.
func TestAppendStringMatchesMarshal(t *testing.T) {
	cases := []string{"", "plain", "/s/a-b_c.d", "<", ">", "&", `"`, `\`, "\x00", "\x1f", "\x7f", "é", "\u2028", "\xff", "a\tb", "2026-11-22T10:02:03.456Z"}
	for b := range 256 {
		cases = append(cases, "x"+string(rune(b)), "y"+string([]byte{byte(b)}))
	}
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := appendString([]byte("prefix"), s); string(got) != "prefix"+string(want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got[len("prefix"):], want)
		}
	}
}

// TestAppendTimeMatchesWireTime: appendTime formats as wireTime does,
// across the years it writes itself and those it hands over.
func TestAppendTimeMatchesWireTime(t *testing.T) {
	zone := time.FixedZone("x", -7*3600-30*60)
	for _, tm := range []time.Time{
		time.Date(2026, 11, 22, 10, 2, 3, 456789000, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, zone),
		time.Date(1, 2, 3, 4, 5, 6, 7, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, 0),
		time.Unix(1<<40, 5e6),
	} {
		want, _ := json.Marshal(wireTime(tm))
		if got := appendTime(nil, tm); string(got) != string(want) {
			t.Errorf("appendTime(%v) = %s, want %s", tm, got, want)
		}
	}
}
