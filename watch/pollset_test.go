package watch

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

func TestPollSet(t *testing.T) {
	p := newPollSet()
	want := map[string]int64{}
	check := func(step string) {
		t.Helper()
		if p.len() != len(want) {
			t.Fatalf("%s: len %d, want %d", step, p.len(), len(want))
		}
		for i, e := range p.ents {
			if p.idx[e.id] != i {
				t.Fatalf("%s: %s indexed at %d, stored at %d", step, e.id, p.idx[e.id], i)
			}
			if e.ns != want[e.id] || string(e.name[:len(e.id)]) != e.id {
				t.Fatalf("%s: entry %+v, want ns %d", step, e, want[e.id])
			}
		}
	}
	for i := range 10 {
		id := fmt.Sprintf("s%d", i)
		p.set(id, newStatName(id), mtime{ns: int64(i)})
		want[id] = int64(i)
	}
	check("added")
	p.set("s3", newStatName("s3"), mtime{ns: 33})
	want["s3"] = 33
	check("updated")
	for _, id := range []string{"s9", "s0", "s4", "nope"} {
		p.del(id)
		delete(want, id)
		check("deleted " + id)
	}
	seen := map[string]bool{"s1": true, "s7": true}
	p.keep(seen)
	maps.DeleteFunc(want, func(id string, _ int64) bool { return !seen[id] })
	check("kept")
	if got := slices.Sorted(maps.Keys(p.idx)); !slices.Equal(got, []string{"s1", "s7"}) {
		t.Fatalf("kept %v", got)
	}
}
