// Command report reads the test events (test2json's JSON) of the Windows test binaries that `make test-windows`
// runs under Wine and prints what a person needs: each package's result, every skipped test with its reason (so
// that what Wine cannot run stays in sight), the output of every failed test, and one closing line,
// "test-windows: N passed, N failed, N skipped" (tests and subtests). It exits 1 if anything failed, or if a
// package ended without a result (a crash, or killed when it hung).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

type key struct{ pkg, test string }

func main() {
	if report(os.Stdin, os.Stdout) {
		os.Exit(1)
	}
}

// report prints the summary of the events read from r and says whether anything failed.
func report(r io.Reader, w io.Writer) (failed bool) {
	output := map[key][]string{}
	var pkgs []string
	ended := map[string]bool{}
	var pass, fail, skip int
	dec := json.NewDecoder(r)
	for {
		var e event
		if err := dec.Decode(&e); err != nil {
			if err != io.EOF {
				fmt.Fprintf(w, "test-windows: reading the test events: %v\n", err)
				failed = true
			}
			break
		}
		k := key{e.Package, e.Test}
		if _, seen := output[key{e.Package, ""}]; !seen {
			output[key{e.Package, ""}] = nil
			pkgs = append(pkgs, e.Package)
		}
		switch {
		case e.Action == "output":
			output[k] = append(output[k], e.Output)
		case e.Test != "" && e.Action == "pass":
			pass++
		case e.Test != "" && e.Action == "skip":
			skip++
			fmt.Fprintf(w, "\tSKIP %s: %s\n", e.Test, reason(output[k]))
		case e.Test != "" && e.Action == "fail":
			fail++
			for _, l := range output[k] {
				if !strings.HasPrefix(l, "=== ") {
					fmt.Fprint(w, l)
				}
			}
		case e.Test == "" && (e.Action == "pass" || e.Action == "skip"):
			ended[e.Package] = true
			fmt.Fprintf(w, "ok  \t%s\t%.1fs\n", e.Package, e.Elapsed)
		case e.Test == "" && e.Action == "fail":
			ended[e.Package] = true
			failed = true
			fmt.Fprintf(w, "FAIL\t%s\t%.1fs\n%s", e.Package, e.Elapsed, tail(output[k], 60))
		}
	}
	for _, p := range pkgs {
		if !ended[p] {
			failed = true
			fmt.Fprintf(w, "FAIL\t%s: no result (the test binary crashed or was killed)\n%s", p, tail(output[key{p, ""}], 60))
		}
	}
	fmt.Fprintf(w, "test-windows: %d passed, %d failed, %d skipped\n", pass, fail, skip)
	return failed || fail > 0
}

// reason is what a skipped test printed, without the test framework's own lines.
func reason(lines []string) string {
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- SKIP") {
			continue
		}
		// file_test.go:12: the reason
		if _, after, ok := strings.Cut(l, ": "); ok && strings.Contains(l[:len(l)-len(after)], ".go:") {
			l = after
		}
		out = append(out, l)
	}
	return strings.Join(out, " / ")
}

// tail is the last n lines of lines, joined.
func tail(lines []string, n int) string {
	return strings.Join(lines[max(0, len(lines)-n):], "")
}
