package sessionlocks

import "testing"

func TestParseStat(t *testing.T) {
	// comm may hold spaces and parentheses; fields are counted from the last ')'.
	line := "4242 (we ird) (name)) S 17 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100 18446744073709551615\n"
	state, ppid, start, err := parseStat([]byte(line))
	if err != nil || state != 'S' || ppid != 17 || start != 987654 {
		t.Fatalf("parseStat = %c %d %d %v", state, ppid, start, err)
	}
	for _, bad := range []string{"", "4242 (x", "4242 (x) S 1 2", "4242 (x) SS 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 9"} {
		if _, _, _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}
