// SPDX-License-Identifier: Apache-2.0

package room

import (
	"maps"
	"testing"
)

// A map drained entry by entry is remade whenever it holds under a quarter
// of its peak, with every entry it holds, until its room is Min.
func TestMapGivesRoomBackAsItDrains(t *testing.T) {
	m, peak := map[int]int{}, 0
	for i := range 10_000 {
		m[i] = i
		peak = max(peak, len(m))
	}
	remade := 0
	for i := range 10_000 {
		delete(m, i)
		before, room := m, peak
		if m = Map(m, &peak); peak != room {
			remade++
			if !maps.Equal(m, before) || peak != len(m) {
				t.Fatalf("after %d deletions: the map remade holds %d of %d entries, room reset to %d", i+1, len(m), len(before), peak)
			}
		}
		if Spare(len(m), peak) {
			t.Fatalf("after %d deletions: %d entries left in room for %d", i+1, len(m), peak)
		}
	}
	if remade == 0 || peak > Min {
		t.Errorf("drained: remade %d times, room for %d", remade, peak)
	}
}
