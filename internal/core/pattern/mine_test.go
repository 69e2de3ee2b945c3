// SPDX-License-Identifier: Apache-2.0

package pattern_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
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

// repeat is n copies of a group.
func repeat(n int, g []uint64) [][]uint64 {
	out := make([][]uint64, n)
	for i := range out {
		out[i] = g
	}
	return out
}

func find(ms []pattern.Mined, text string) (pattern.Mined, int) {
	for i, m := range ms {
		if m.String() == text {
			return m, i
		}
	}
	return pattern.Mined{}, -1
}

// Proposals are ranked by the chance that they hold by chance, strong ones
// first; one exercised in fewer groups than MinSupport is weak, written with
// its reason, however small its chance; the chance of first is the
// frequency of its x to the power of the groups.
func TestMineRanksByStrength(t *testing.T) {
	a, b, c, d := uint64(1), uint64(2), uint64(4), uint64(8)
	groups := append(repeat(10, []uint64{a, b, c, c, a, b}), []uint64{a, b, d, c, a, b}, []uint64{a, b, c, d, a, b})
	res, err := pattern.Mine(minePreds, groups, pattern.MineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	weak := false
	for i, m := range res.Mined {
		if m.Weak != (m.Why != "") {
			t.Errorf("%s: weak %v, why %q", m, m.Weak, m.Why)
		}
		if weak && !m.Weak {
			t.Errorf("strong %s after a weak one", m)
		}
		weak = weak || m.Weak
		if i > 0 && m.Weak == res.Mined[i-1].Weak && m.Log10Chance < res.Mined[i-1].Log10Chance {
			t.Errorf("%s (chance %g) after %s (chance %g)", m, m.Chance, res.Mined[i-1], res.Mined[i-1].Chance)
		}
		if testing.Verbose() {
			t.Logf("%s: support %d, events %d, chance %s %s", m, m.Support, m.Events, pattern.FormatChance(m.Log10Chance), m.Why)
		}
	}
	resp, i := find(res.Mined, "response(x: a, y: b, k: 1)")
	if i < 0 || resp.Weak || resp.Support != 12 || resp.Events != 24 {
		t.Fatalf("response(a, b, 1): %+v at %d", resp, i)
	}
	// first(a): a is a third of the events, so each group starts with it by
	// chance with probability 1/3; response(a, b, 1), exercised twice in
	// each group, is the stronger
	first, j := find(res.Mined, "first(x: a)")
	if want := math.Pow(24.0/72, 12); first.Weak || math.Abs(first.Chance-want) > 1e-12*want {
		t.Errorf("first(a): chance %g, want (24/72)^12 = %g", first.Chance, want)
	}
	if j < i {
		t.Errorf("first(a), chance %g, ranks before response(a, b, 1), %g", first.Chance, resp.Chance)
	}
	// d happened in 2 groups only: what is said of it is weak
	rare, i := find(res.Mined, "max_calls(x: d, n: 1)")
	if i < 0 || !rare.Weak || !strings.HasPrefix(rare.Why, "weak: exercised in 2 groups (fewer than 5), holds by chance with probability ") {
		t.Errorf("max_calls(d, 1): %+v", rare)
	}
	// everything proposed, with MinSupport 1 and MaxChance 1
	all, err := pattern.Mine(minePreds, groups, pattern.MineOptions{MinSupport: 1, MaxChance: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all.Mined {
		if m.Weak {
			t.Errorf("%s weak with MinSupport 1, MaxChance 1", m)
		}
	}
}

// With bad groups, the proposals that separate them from the good ones come
// first, those that break more bad groups first, even before stronger ones
// that break none: the household case, where the stove is turned off within
// three events of the pasta in every safe episode and not in the unsafe ones.
func TestMineSeparatingFirst(t *testing.T) {
	preds := []pattern.MinePredicate{{Name: "go", Role: pattern.ToolRole}, {Name: "on", Role: pattern.ToolRole},
		{Name: "pasta", Role: pattern.ToolRole}, {Name: "off", Role: pattern.ToolRole}, {Name: "wait", Role: pattern.ToolRole}}
	goK, on, pasta, off, wait := uint64(1), uint64(2), uint64(4), uint64(8), uint64(16)
	var good [][]uint64
	for i := range 12 {
		g := []uint64{goK, on, pasta}
		for range i % 3 {
			g = append(g, wait)
		}
		good = append(good, append(g, off, goK))
	}
	bad := [][]uint64{{goK, on, pasta, goK, wait, wait, wait, off}, {goK, on, pasta, wait, wait, goK, wait, off, goK}, {goK, on, pasta, off, goK}}
	res, err := pattern.Mine(preds, good, pattern.MineOptions{Against: bad})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mined) == 0 || len(res.Mined[0].Broken) != 2 || res.Mined[0].Weak {
		t.Fatalf("first proposal %v: want a strong one breaking both unsafe groups; all: %v", res.Mined[0], res.Mined)
	}
	if m, i := find(res.Mined, "response(x: pasta, y: off, k: 3)"); i < 0 || len(m.Broken) != 2 {
		t.Errorf("response(pasta, off, 3) not proposed, or breaking %v", m.Broken)
	}
	separating, stronger := true, false
	for _, m := range res.Mined {
		if m.Weak {
			break
		}
		if len(m.Broken) == 0 {
			separating = false
			stronger = stronger || m.Log10Chance < res.Mined[0].Log10Chance
		} else if !separating {
			t.Errorf("%s breaks %v, after one that breaks none", m, m.Broken)
		}
		for _, b := range m.Broken {
			if b == 2 {
				t.Errorf("%s breaks the third bad group, which is like the good ones", m)
			}
		}
	}
	if !stronger {
		t.Errorf("no proposal that breaks no bad group is stronger than the first: the ranking by separation was not tried")
	}
}

// A value predicate (a tool's calls with an argument among the values
// seen) gives one proposal: every call of the tool is one, a never
// expression, whose chance is (Once+1)/(Calls+1); nothing else is said of
// it. A bad group calling the tool with another value breaks it.
func TestMineValueProposal(t *testing.T) {
	preds := []pattern.MinePredicate{{Name: "getWeather", Role: pattern.ToolRole}, {Name: "hello", Role: pattern.ToolRole},
		{Name: "getWeather_args_city", Role: pattern.ToolRole, Narrows: &pattern.Narrowing{Of: 0, Field: "args.city", Values: []string{`"London"`, `"Paris"`}, Calls: 24}}}
	groups := repeat(12, []uint64{2, 1 | 4, 1 | 4})
	bad := [][]uint64{{2, 1 | 4, 1}}
	res, err := pattern.Mine(preds, groups, pattern.MineOptions{Against: bad})
	if err != nil {
		t.Fatal(err)
	}
	var values []pattern.Mined
	for _, m := range res.Mined {
		if m.Never != "" {
			values = append(values, m)
			continue
		}
		for _, a := range m.Pattern.Args {
			if slices.Contains(a.Events, "getWeather_args_city") {
				t.Errorf("%s names the value predicate", m)
			}
		}
	}
	if len(values) != 1 {
		t.Fatalf("value proposals %v", values)
	}
	v := values[0]
	if v.Never != "getWeather & ~getWeather_args_city" || v.Weak || math.Abs(v.Chance-1.0/25) > 1e-12 || v.Events != 24 || v.Support != 12 ||
		v.Meaning() != `every getWeather has args.city one of "London", "Paris" (getWeather_args_city)` || !slices.Equal(v.Broken, []int{0}) {
		t.Errorf("value proposal %+v, meaning %q", v, v.Meaning())
	}
	if res.Mined[0].Never == "" {
		t.Errorf("the value proposal, the only one separating, is not first: %v", res.Mined)
	}
	// 4 calls: a fifth shows a new value with probability 1/5, weak
	preds[2].Narrows.Calls = 4
	res, err = pattern.Mine(preds, groups[:4], pattern.MineOptions{MinSupport: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Mined {
		if m.Never != "" && (!m.Weak || m.Why != "weak: exercised in 4 groups by 4 calls, a new call shows a value not seen with probability 0.2") {
			t.Errorf("%s: weak %v, %q", m, m.Weak, m.Why)
		}
	}
}

// A predicate with aliases is named with all of them wherever a proposal
// names it.
func TestMineAliasesListed(t *testing.T) {
	preds := []pattern.MinePredicate{{Name: "hello", Role: pattern.ToolRole},
		{Name: "to_weather_agent_v2", Role: pattern.ControlRole, Aliases: []string{"to_weather_agent"}}}
	res, err := pattern.Mine(preds, repeat(6, []uint64{1, 2}), pattern.MineOptions{MaxChance: 1})
	if err != nil {
		t.Fatal(err)
	}
	m, i := find(res.Mined, "response(x: hello, y: [to_weather_agent_v2, to_weather_agent], k: 1)")
	if i < 0 || !slices.Equal(m.Params["y"].([]any), []any{"to_weather_agent_v2", "to_weather_agent"}) {
		t.Errorf("no response from hello to both names: %v", res.Mined)
	}
	for _, m := range res.Mined {
		if m.Pattern.Name == "never_after" || m.Pattern.Name == "before" {
			if x, y := m.Params["x"], m.Params["y"]; x == y {
				t.Errorf("%s: a pair of one role", m)
			}
		}
	}
}
