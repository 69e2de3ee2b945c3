// SPDX-License-Identifier: Apache-2.0

package pattern_test

import (
	"math/rand/v2"
	"testing"

	"github.com/agentguard/agentguard/internal/core/pattern"
)

var minePreds = []pattern.MinePredicate{
	{Name: "a", Role: pattern.ToolRole}, {Name: "b", Role: pattern.ToolRole},
	{Name: "c", Role: pattern.ControlRole}, {Name: "d", Role: pattern.ControlRole},
}

// scriptGroup is a run of a little agent: mostly one script, now and then a
// detour, so that some assertions hold and others not.
func scriptGroup(r *rand.Rand) []uint64 {
	script := []uint64{4, 1, 8, 2, 2}
	var out []uint64
	for _, b := range script {
		switch r.IntN(6) {
		case 0: // skipped
		case 1:
			out = append(out, b, uint64(1)<<r.IntN(4))
		default:
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		out = append(out, 1)
	}
	return out
}

// violated: the assertion has a violation (not just pending) on s.
func violated(t *testing.T, m pattern.Mined, s seq) bool {
	for _, v := range engine(t, m.Pattern, m.Params, s) {
		if v[0] == 'V' {
			return true
		}
	}
	return false
}

// What Mine proposes holds on every group it was given (judged here by the
// runner of the assertion config, not the miner's own check), its counts
// agree with the engine, and leaving out the implied ones loses nothing:
// on random groups, whenever a left-out assertion is violated, a proposed
// one is too.
func TestMineIsSoundAndPrunesSoundly(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	names := []string{"a", "b", "c", "d"}
	saved := preds
	preds = names
	defer func() { preds = saved }()
	proposed, left := 0, 0
	for range 40 {
		groups := make([][]uint64, 2+r.IntN(4))
		for g := range groups {
			groups[g] = scriptGroup(r)
		}
		res, err := pattern.Mine(minePreds, groups, pattern.MineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Refuted != 0 || res.Candidates != len(res.Mined)+len(res.Left) {
			t.Fatalf("refuted %d, candidates %d = %d mined + %d left?", res.Refuted, res.Candidates, len(res.Mined), len(res.Left))
		}
		for _, m := range res.Mined {
			for _, g := range groups {
				if vs := engine(t, m.Pattern, m.Params, g); len(vs) > 0 {
					t.Fatalf("mined %s gives %v on a good group %v", m.Pattern, vs, g)
				}
			}
		}
		if testing.Verbose() && proposed == 0 {
			for _, m := range res.Mined {
				t.Logf("%v: %s support %d", groups, m.Pattern, m.Support)
			}
			for _, m := range res.Left {
				t.Logf("left: %s", m.Pattern)
			}
		}
		proposed += len(res.Mined)
		left += len(res.Left)
		for range 30 {
			s := scriptGroup(r)
			for _, l := range res.Left {
				if !violated(t, l, s) {
					continue
				}
				caught := false
				for _, m := range res.Mined {
					if caught = violated(t, m, s); caught {
						break
					}
				}
				if !caught {
					t.Fatalf("left out %s as implied, violated on %v, but no proposed assertion is; proposed %v", l.Pattern, s, res.Mined)
				}
			}
		}
	}
	if proposed == 0 || left == 0 {
		t.Errorf("%d proposed, %d left out: the test exercised nothing", proposed, left)
	}
}
