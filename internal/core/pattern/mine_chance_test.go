// SPDX-License-Identifier: Apache-2.0

package pattern

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The chance figure's automata read each pattern exactly as the engine
// judges its expansion: for every candidate of random runs, and each group
// length up to 4, the probability an automaton gives equals the one found
// by running the engine over every sequence of that length drawn from the
// same events, weighted by their frequencies.
func TestMineChanceIsTheEnginesProbability(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	preds := []MinePredicate{{Name: "a", Role: ToolRole}, {Name: "b", Role: ToolRole}, {Name: "c", Role: ControlRole}, {Name: "d", Role: ControlRole}}
	checked := map[string]int{}
	for range 12 {
		groups := make([][]uint64, 2+r.IntN(3))
		for g := range groups {
			groups[g] = make([]uint64, 1+r.IntN(6))
			for i := range groups[g] {
				groups[g][i] = uint64(1) << r.IntN(4)
				if r.IntN(5) == 0 {
					groups[g][i] |= uint64(1) << r.IntN(4)
				}
			}
		}
		m := miner{preds: preds, groups: groups, opts: MineOptions{MaxK: 3, MinSupport: 1, MaxChance: 1}}
		m.index()
		m.distribution()
		for _, c := range m.candidates() {
			if c.pat == narrows {
				continue
			}
			a, err := m.assertion(c)
			if err != nil {
				t.Fatal(err)
			}
			for l := 1; l <= 4; l++ {
				m.lens = map[int]int{l: 1}
				got := math.Pow(10, m.log10Chance(m.automatonOf(c)))
				want := 0.0
				seq := make([]uint64, l)
				var walk func(i int, p float64)
				walk = func(i int, p float64) {
					if i == l {
						if holdsOn(a, [][]uint64{seq}) {
							want += p
						}
						return
					}
					for j, b := range m.dist {
						seq[i] = b
						walk(i+1, p*m.distP[j])
					}
				}
				walk(0, 1)
				if math.Abs(got-want) > 1e-9 {
					t.Fatalf("%s x=%d y=%d ys=%v k=%d over %d events of %v: automaton %g, engine %g", c.pat, c.x, c.y, c.ys, c.k, l, m.dist, got, want)
				}
			}
			checked[c.pat]++
		}
	}
	for _, name := range Names() {
		if checked[name] == 0 && name != "never" {
			t.Errorf("no candidate %s was checked", name)
		}
	}
}

func TestFormatChance(t *testing.T) {
	for _, tc := range []struct {
		log10 float64
		want  string
	}{{0, "1"}, {math.Log10(0.41), "0.41"}, {math.Log10(0.0031), "0.0031"}, {math.Log10(2.5e-7), "2.5e-07"}, {-400.2, "6.3e-401"}, {math.Inf(-1), "0"}} {
		if got := FormatChance(tc.log10); got != tc.want {
			t.Errorf("FormatChance(%g) = %q, want %q", tc.log10, got, tc.want)
		}
	}
}

// A strong assertion is never left out as implied by weak ones: those are
// written commented out, and would leave what they imply unchecked. A weak
// one is left out for strong ones as for weak ones.
func TestPruneOnlyByStrong(t *testing.T) {
	first := cand{pat: "first", x: 0, y: -1}
	requires := cand{pat: "requires", x: 0, y: -1}
	for _, tc := range []struct {
		firstWeak, requiresWeak bool
		kept                    []string
	}{
		{false, false, []string{"first"}},
		{true, false, []string{"requires", "first"}},
		{false, true, []string{"first"}},
		{true, true, []string{"first"}},
	} {
		f, r := first, requires
		f.weak, r.weak = tc.firstWeak, tc.requiresWeak
		kept, _ := prune([]cand{f, r})
		var got []string
		for _, c := range kept {
			got = append(got, c.pat)
		}
		if !slices.Equal(got, tc.kept) {
			t.Errorf("first weak %v, requires weak %v: kept %v, want %v", tc.firstWeak, tc.requiresWeak, got, tc.kept)
		}
	}
}
