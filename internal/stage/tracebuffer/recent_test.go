// SPDX-License-Identifier: Apache-2.0

package tracebuffer

import (
	"math/rand/v2"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// recentIDs remembers exactly the last n IDs added, duplicates included,
// while its ring grows and after it wraps, and never holds more than n.
func TestRecentIDsAreTheLastN(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 64} {
		r := newRecentIDs(n)
		var added []pcommon.TraceID
		for range 2000 {
			id := pcommon.TraceID{byte(rng.IntN(3 * n))}
			r.add(id)
			added = append(added, id)
			last := added[max(0, len(added)-n):]
			for b := range 3 * n {
				probe := pcommon.TraceID{byte(b)}
				if got, want := r.has(probe), slices.Contains(last, probe); got != want {
					t.Fatalf("n %d, after %d adds: has(%d) %v, want %v", n, len(added), b, got, want)
				}
			}
			if len(r.ring) > n || len(r.set) > n {
				t.Fatalf("n %d: a ring of %d and a set of %d", n, len(r.ring), len(r.set))
			}
		}
	}
}
