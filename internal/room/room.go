// SPDX-License-Identifier: Apache-2.0

// Package room decides when a queue or table that grew for a burst gives
// its room back. Go keeps a slice's capacity and a map's buckets however
// little they hold afterwards, so a burst held once would be paid for as
// long as the collector runs. The rule is one for every container: remade
// at twice its size once it holds under a quarter of its room, so each
// remaking copies at most a quarter of the room it frees, and a container
// that grows and shrinks by steps costs O(1) copies an entry.
package room

import "maps"

// Min is the room a container keeps however little it holds: below it,
// remaking would cost more than it frees.
const Min = 256

// Spare reports whether a container holding n entries, with room for c,
// should be remade.
func Spare(n, c int) bool { return c > Min && 4*n < c }

// Size is the room a container holding n entries is remade with.
func Size(n int) int { return max(2*n, Min) }

// Map is m, or, when it holds under a quarter of peak (the most entries it
// held since it was made), a copy made for its entries; peak is then reset
// to their number. A map's room is its peak: it never shrinks.
func Map[M ~map[K]V, K comparable, V any](m M, peak *int) M {
	if !Spare(len(m), *peak) {
		return m
	}
	c := make(M, len(m))
	maps.Copy(c, m)
	*peak = len(m)
	return c
}
