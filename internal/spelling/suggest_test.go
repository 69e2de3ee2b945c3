// SPDX-License-Identifier: Apache-2.0

package spelling

import "testing"

// A suggestion is the nearest name seen within a third of the wanted one's
// length in edits, the first in order on a tie; none for an exact match.
func TestDidYouMean(t *testing.T) {
	seen := []string{"greeting_agent", "farewell_agent", "gen_ai.conversation.id", "conversation", "say_hello"}
	for want, got := range map[string]string{
		"greeting_agnet": `; did you mean "greeting_agent"?`,
		"conversaton":    `; did you mean "conversation"?`,
		"say_helo":       `; did you mean "say_hello"?`,
		"say_hello":      "",
		"weather_agent":  "",
		"":               "",
	} {
		if s := DidYouMean(want, seen); s != got {
			t.Errorf("DidYouMean(%q) = %q, want %q", want, s, got)
		}
	}
}

// The distance is a metric: zero only between equal strings, symmetric,
// and within the triangle inequality, on every pair of a few names.
func TestEditDistance(t *testing.T) {
	if d := EditDistance("kitten", "sitting"); d != 3 {
		t.Errorf("EditDistance(kitten, sitting) = %d, want 3", d)
	}
	words := []string{"", "a", "ab", "greeting_agent", "greeting_agnet", "farewell_agent", "conversation"}
	for _, a := range words {
		for _, b := range words {
			d := EditDistance(a, b)
			if (d == 0) != (a == b) || d != EditDistance(b, a) {
				t.Errorf("EditDistance(%q, %q) = %d", a, b, d)
			}
			for _, c := range words {
				if EditDistance(a, c) > d+EditDistance(b, c) {
					t.Errorf("triangle: %q %q %q", a, b, c)
				}
			}
		}
	}
}
