package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
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
					WriterVerified: true, Process: &sessionlocks.Process{StartedAt: t0.Add(-time.Second), Command: "copilot --resume"},
					Owner: &sessionlocks.Owner{PID: 42, StartedAt: t0.Add(-time.Second), Evidence: "pid 42 holds the exclusive flock"}},
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
		got, err := c.appendList(nil, `/state "dir"`, 7, ss, all, nil)
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
// Holder, Process and Owner in turn and checks that the reused encoding follows:
// a field sameWireSession forgot would keep showing its old value.
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
		if name := holderT.Field(i).Name; name != "Process" && name != "Owner" && holderT.Field(i).IsExported() {
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
	ownerT := reflect.TypeFor[sessionlocks.Owner]()
	for i := 0; i < ownerT.NumField(); i++ {
		if ownerT.Field(i).IsExported() {
			paths = append(paths, []int{-3, i})
		}
	}
	for _, path := range paths {
		ss := sampleSessions()
		var f reflect.Value
		switch path[0] {
		case -1:
			f = reflect.ValueOf(&ss[0].Holders[0]).Elem().Field(path[1])
		case -2:
			f = reflect.ValueOf(ss[0].Holders[0].Process).Elem().Field(path[1])
		case -3:
			f = reflect.ValueOf(ss[0].Holders[0].Owner).Elem().Field(path[1])
		default:
			f = reflect.ValueOf(&ss[0]).Elem().Field(path[0])
		}
		name := fmt.Sprint(path, " ", f.Type())
		t.Run(name, func(t *testing.T) {
			var c sessionJSON
			before, _ := c.appendList(nil, "/s", 2, sampleSessions(), true, nil)
			changeValue(t, f)
			want, _ := json.Marshal(&ListSessionsResult{StateDir: "/s", Total: 2, Sessions: wireSessions(ss)})
			got, _ := c.appendList(nil, "/s", 2, ss, true, nil)
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
		t.Fatalf("no way to change a %T: teach changeValue, and check sameWireSession compares it", v)
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

// rebuild is what a client does with a versioned answer: the whole list of
// session encodings, from the answer alone or from the base it names.
func rebuild(t *testing.T, answer []byte, bases map[string][]json.RawMessage) (version string, list []json.RawMessage, delta bool) {
	t.Helper()
	var r struct {
		Sessions []json.RawMessage
		Version  string
		Delta    *ListingDelta
	}
	if err := json.Unmarshal(answer, &r); err != nil {
		t.Fatalf("%v in %s", err, answer)
	}
	if r.Version == "" {
		t.Fatalf("no version in %s", answer)
	}
	if r.Delta == nil {
		return r.Version, r.Sessions, false
	}
	base, ok := bases[r.Delta.Since]
	if !ok {
		t.Fatalf("delta against %q, which the client never held", r.Delta.Since)
	}
	list = []json.RawMessage{}
	fresh := r.Sessions
	for i := 0; i < len(r.Delta.Order); i++ {
		if k := r.Delta.Order[i]; k < 0 {
			list = append(list, fresh[:-k]...)
			fresh = fresh[-k:]
			continue
		}
		start, count := r.Delta.Order[i], r.Delta.Order[i+1]
		if count <= 0 {
			t.Fatalf("count %d in %v", count, r.Delta.Order)
		}
		list = append(list, base[start:start+count]...)
		i++
	}
	if len(fresh) != 0 {
		t.Fatalf("%d fresh sessions left over by order %v", len(fresh), r.Delta.Order)
	}
	return r.Version, list, true
}

// TestSessionJSONDeltas lists changing sessions again and again, each time
// since a version the client holds (the last, an older one, a forgotten
// one, none), and holds the list rebuilt from each delta to json.Marshal of
// the whole list. A delta that refers to a session as it no longer is would
// show the client an old verdict.
func TestSessionJSONDeltas(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var c sessionJSON
	var ss []sessionlocks.Session
	for i := range 40 {
		id := fmt.Sprintf("s%02d", i)
		ss = append(ss, sessionlocks.Session{ID: id, Dir: "/s/" + id, UpdatedAt: t0.Add(time.Duration(i) * time.Minute), State: sessionlocks.StateFree})
	}
	bases := map[string][]json.RawMessage{}
	var held []string // versions in the order the client got them
	deltas, sameVersion := 0, 0
	for step := range 400 {
		// Change the sessions the way a state dir does: a lock comes or
		// goes, a session is updated (moves to the top), appears, vanishes.
		next := slices.Clone(ss)
		for range rng.IntN(4) {
			if len(next) == 0 {
				break
			}
			i := rng.IntN(len(next))
			switch rng.IntN(5) {
			case 0:
				next[i].State = sessionlocks.StateInUse
				next[i].Holders = []sessionlocks.Holder{{SessionID: next[i].ID, PID: rng.IntN(1000), Verdict: sessionlocks.Live, Reason: sessionlocks.ReasonHoldLocked}}
			case 1:
				next[i].State, next[i].Holders = sessionlocks.StateFree, nil
			case 2:
				next[i].UpdatedAt = t0.Add(time.Duration(100+step) * time.Minute)
			case 3:
				next = slices.Delete(next, i, i+1)
			case 4:
				id := fmt.Sprintf("n%03d", step)
				next = append(next, sessionlocks.Session{ID: id, Dir: "/s/" + id, UpdatedAt: t0.Add(time.Duration(50+step) * time.Minute), State: sessionlocks.StateFree})
			}
		}
		slices.SortStableFunc(next, func(a, b sessionlocks.Session) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
		// Every few steps the very same slice again, as ListShared hands
		// out while nothing changes; and now and then a page of it.
		if step%5 != 0 {
			ss = next
		}
		list, all := ss, true
		if step%7 == 3 && len(ss) > 4 {
			list, all = ss[2:len(ss)-1], false
		}
		since := ""
		switch {
		case len(held) == 0 || step%11 == 0:
		case step%13 == 0:
			since = "feedbeef-1" // another server's
		case step%3 == 0 && len(held) > 2:
			since = held[len(held)-3] // an older answer, perhaps forgotten
		default:
			since = held[len(held)-1]
		}
		got, err := c.appendList(nil, "/s", len(list), list, all, &since)
		if err != nil {
			t.Fatal(err)
		}
		version, rebuilt, delta := rebuild(t, got, bases)
		if delta {
			deltas++
		}
		want := make([]json.RawMessage, len(list))
		for i := range list {
			want[i], _ = json.Marshal(wireSession(list[i]))
		}
		if !slices.EqualFunc(rebuilt, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
			t.Fatalf("step %d since %q: rebuilt\n%s\nwant\n%s\nanswer %s", step, since, rebuilt, want, got)
		}
		if prev, ok := bases[version]; ok {
			sameVersion++
			if !slices.EqualFunc(prev, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
				t.Fatalf("step %d: version %s given to a different list", step, version)
			}
		}
		bases[version] = rebuilt
		held = append(held, version)
	}
	if deltas < 200 || sameVersion < 5 {
		t.Errorf("%d deltas and %d repeated versions in 400 answers: the test no longer reaches both", deltas, sameVersion)
	}
	// Without since, the answer is as it always was.
	got, _ := c.appendList(nil, "/s", len(ss), ss, true, nil)
	want, _ := json.Marshal(&ListSessionsResult{StateDir: "/s", Total: len(ss), Sessions: wireSessions(ss)})
	if string(got) != string(want) {
		t.Fatalf("without since:\n got %s\nwant %s", got, want)
	}
}

// TestSessionJSONDeltaMatchesMarshal holds a versioned answer, whole and as a
// delta, to json.Marshal of the result struct: the schema is made from it.
func TestSessionJSONDeltaMatchesMarshal(t *testing.T) {
	var c sessionJSON
	ss := sampleSessions()
	none := ""
	first, _ := c.appendList(nil, "/s", 2, ss, true, &none)
	var r ListSessionsResult
	if err := json.Unmarshal(first, &r); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(&ListSessionsResult{StateDir: "/s", Total: 2, Sessions: wireSessions(ss), Version: r.Version})
	if string(first) != string(want) {
		t.Fatalf("whole:\n got %s\nwant %s", first, want)
	}
	changed := sampleSessions()
	changed[1].Name = "renamed"
	got, _ := c.appendList(nil, "/s", 2, changed, true, &r.Version)
	var d ListSessionsResult
	if err := json.Unmarshal(got, &d); err != nil {
		t.Fatal(err)
	}
	want, _ = json.Marshal(&ListSessionsResult{StateDir: "/s", Total: 2, Sessions: wireSessions(changed[1:]), Version: d.Version,
		Delta: &ListingDelta{Since: r.Version, Order: []int{0, 1, -1}}})
	if string(got) != string(want) {
		t.Fatalf("delta:\n got %s\nwant %s", got, want)
	}
	if d.Version == r.Version {
		t.Error("a changed list kept its version")
	}
	again, _ := c.appendList(nil, "/s", 2, changed, true, &d.Version)
	want, _ = json.Marshal(&ListSessionsResult{StateDir: "/s", Total: 2, Sessions: []Session{}, Version: d.Version,
		Delta: &ListingDelta{Since: d.Version, Order: []int{0, 2}}})
	if string(again) != string(want) {
		t.Fatalf("unchanged:\n got %s\nwant %s", again, want)
	}
}

// BenchmarkAppendListOneChanged is the server's encoding of a listing of
// 10,000 sessions after one changed (updated, so it moves to the top), as a
// delta against the answer before, which the client named with since.
func BenchmarkAppendListOneChanged(b *testing.B) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ss := make([]sessionlocks.Session, 10000)
	for i := range ss {
		id := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
		ss[i] = sessionlocks.Session{ID: id, Dir: "/home/dev/.copilot/session-state/" + id, Name: "Fix the flaky test", CWD: "/home/dev/src/project",
			ClientName: "copilot-cli", CreatedAt: t0.Add(-time.Duration(i) * time.Minute), UpdatedAt: t0.Add(-time.Duration(i) * time.Minute), State: sessionlocks.StateFree}
	}
	var c sessionJSON
	since := ""
	out, _ := c.appendList(nil, "/s", len(ss), ss, true, &since)
	var r ListSessionsResult
	json.Unmarshal(out, &r)
	since = r.Version
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		next := make([]sessionlocks.Session, len(ss))
		k := 1 + i%(len(ss)-1)
		next[0] = ss[k]
		next[0].UpdatedAt = t0.Add(time.Duration(i) * time.Second)
		copy(next[1:], ss[:k])
		copy(next[1+k:], ss[k+1:])
		ss = next
		out, _ = c.appendList(out[:0], "/s", len(ss), ss, true, &since)
		since = string(out[bytes.LastIndex(out, []byte(`"version":"`))+11:])
		since = since[:strings.IndexByte(since, '"')]
	}
}
