// Package editdist measures how far apart two strings are, for the "did you
// mean" of an error message that names something the caller misspelt.
package editdist

import "strings"

// Distance is the Levenshtein distance between a and b, counted in bytes:
// the fewest insertions, deletions and substitutions that turn a into b.
// It takes time len(a)*len(b) and room len(b).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest returns the candidate nearest to s, ignoring case, if it is fewer
// than limit edits away, and "" if none is; of candidates equally near, the
// first. A candidate shorter than s by limit or more is passed over without
// measuring: it cannot be near, and the distance costs the product of the
// two lengths, which matters when s is a long string a client sent.
func Closest(s string, candidates []string, limit int) string {
	best, bestDist := "", limit
	lower, folded := "", false
	for _, c := range candidates {
		if len(s) > len(c)+bestDist {
			continue
		}
		if !folded {
			// Folded only once a candidate is near enough in length: a
			// long s is never copied.
			lower, folded = strings.ToLower(s), true
		}
		d := Distance(lower, strings.ToLower(c))
		if strings.EqualFold(s, c) {
			d = 0
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
