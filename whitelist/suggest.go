package whitelist

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxSuggestions is how many candidates a "did you mean" offers.
const maxSuggestions = 3

// closest returns the labels of up to maxSuggestions options whose keys are
// nearest to query by Levenshtein distance, ignoring case, nearest first (ties
// in option order). keys and labels are parallel: keys are what is compared
// (for paths, the normalised shape), labels what is shown. Options further
// than half the query's length (at least 2) are dropped: past that the
// suggestion is noise, not a typo fix.
func closest(query string, keys, labels []string) []string {
	q := strings.ToLower(query)
	limit := max(2, utf8.RuneCountInString(q)/2)
	type scored struct {
		i, d int
	}
	var near []scored
	for i, k := range keys {
		if d := levenshtein(q, strings.ToLower(k)); d <= limit {
			near = append(near, scored{i, d})
		}
	}
	slices.SortStableFunc(near, func(a, b scored) int { return cmp.Compare(a.d, b.d) })
	var out []string
	for _, n := range near {
		if len(out) == maxSuggestions {
			break
		}
		if !slices.Contains(out, labels[n.i]) {
			out = append(out, labels[n.i])
		}
	}
	return out
}

// didYouMean formats suggestions as a message suffix: `; did you mean "a",
// "b" or "c"?`, or "" when there are none.
func didYouMean(labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	q := make([]string, len(labels))
	for i, l := range labels {
		q[i] = fmt.Sprintf("%q", l)
	}
	if len(q) == 1 {
		return "; did you mean " + q[0] + "?"
	}
	return "; did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1] + "?"
}

// levenshtein returns the edit distance between a and b in runes
// (insertions, deletions and substitutions each cost 1).
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) < len(rb) {
		ra, rb = rb, ra
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Suggest is the "did you mean" suffix for a name that matched none of
// candidates (`; did you mean "getItem"?`), or "" when none is close: the
// same rule the whitelist's own errors use, for other commands' messages.
func Suggest(name string, candidates []string) string {
	return didYouMean(closest(name, candidates, candidates))
}
