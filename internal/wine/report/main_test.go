package main

import (
	"strings"
	"testing"
)

// Events as test2json writes them for three packages: one that passes with a skip, one with a failing test, and
// one killed before it ended.
const events = `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestOK"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"a","Test":"TestOK","Elapsed":0.1}
{"Action":"run","Package":"a","Test":"TestGap"}
{"Action":"output","Package":"a","Test":"TestGap","Output":"=== RUN   TestGap\n"}
{"Action":"output","Package":"a","Test":"TestGap","Output":"    gap_test.go:9: skipped under Wine: a gap\n"}
{"Action":"output","Package":"a","Test":"TestGap","Output":"--- SKIP: TestGap (0.00s)\n"}
{"Action":"skip","Package":"a","Test":"TestGap"}
{"Action":"pass","Package":"a","Elapsed":1.5}
{"Action":"start","Package":"b"}
{"Action":"run","Package":"b","Test":"TestBad"}
{"Action":"output","Package":"b","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"b","Test":"TestBad","Output":"    bad_test.go:3: got 1, want 2\n"}
{"Action":"fail","Package":"b","Test":"TestBad"}
{"Action":"fail","Package":"b","Elapsed":0.5}
{"Action":"start","Package":"c"}
{"Action":"run","Package":"c","Test":"TestHang"}
{"Action":"output","Package":"c","Output":"goroutine 1 [chan receive]:\n"}
`

func TestReport(t *testing.T) {
	var out strings.Builder
	failed := report(strings.NewReader(events), &out)
	got := out.String()
	for _, want := range []string{
		"ok  \ta\t1.5s\n",
		"\tSKIP TestGap: skipped under Wine: a gap\n",
		"    bad_test.go:3: got 1, want 2\n",
		"FAIL\tb\t0.5s\n",
		"FAIL\tc: no result (the test binary crashed or was killed)\ngoroutine 1 [chan receive]:\n",
		"test-windows: 1 passed, 1 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if !failed {
		t.Error("a failed test and a package without a result reported as success")
	}
	if report(strings.NewReader(events[:strings.Index(events, `{"Action":"start","Package":"b"}`)]), &out) {
		t.Error("a passing package reported as a failure")
	}
}
