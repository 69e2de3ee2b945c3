// SPDX-License-Identifier: Apache-2.0

// Package spelling finds, for a name that matched nothing (a misspelt tool,
// agent or attribute), the nearest of the names actually seen.
package spelling

import (
	"fmt"
	"slices"
)

// DidYouMean is `; did you mean "X"?` for the seen name nearest to want,
// within a third of want's length in edits (the first in order on a tie),
// or "" when none is that near or want itself was seen.
func DidYouMean(want string, seen []string) string {
	best, bestD := "", len(want)/3+1
	for _, s := range slices.Sorted(slices.Values(seen)) {
		if d := EditDistance(want, s); d < bestD {
			best, bestD = s, d
		}
	}
	if best == "" || best == want {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// EditDistance is the Levenshtein distance of a and b, by bytes.
func EditDistance(a, b string) int {
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
