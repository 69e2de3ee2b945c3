// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"strings"
	"testing"
)

var stovePredicates = []string{"fork_on_burner", "knob_on"}

// stoveCounts are spec V2's: 30 traces, each six events in s0 then one in
// s1, then end.
func stoveCounts(t testing.TB) *Counts {
	c := NewCounts()
	s0, s1 := State(0), State(0b10) // f0k0, f0k1
	for range 30 {
		if err := c.AddTrace([]State{s0, s0, s0, s0, s0, s0, s1}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func stoveSpec() Spec {
	return Spec{Predicates: stovePredicates, Rules: Rules{MaxChanges: 1}, Unsafe: "fork_on_burner and knob_on"}
}

func learnStove(t testing.TB) *Model {
	m, err := Learn(stoveSpec(), stoveCounts(t))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestV2LearningReproducesV1Exactly(t *testing.T) {
	c := stoveCounts(t)
	if c.Pair(0, 0) != 150 || c.Pair(0, 0b10) != 30 || c.Pair(0b10, End) != 30 || c.Traces() != 30 {
		t.Fatalf("counts %v", c.Pairs())
	}
	m := learnStove(t)
	names := []string{"00", "01", "10", "11", "end"}
	for i, want := range names {
		if got := m.StateName(i); got != want {
			t.Fatalf("state %d is %s, want %s", i, got, want)
		}
		if i < 4 && m.ValidSuccessors(i) != 4 {
			t.Errorf("k_%s = %d, want 4", want, m.ValidSuccessors(i))
		}
	}
	want := stove().chain(t)
	got := m.Chain()
	for s := range 5 {
		for u := range 5 {
			if got.Prob(s, u) != want.Prob(s, u) {
				t.Errorf("P(%s|%s) = %.17g, want %.17g", names[u], names[s], got.Prob(s, u), want.Prob(s, u))
			}
		}
	}
	for _, invalid := range [][2]int{{0, 3}, {1, 2}, {2, 1}, {3, 0}} {
		if got.Prob(invalid[0], invalid[1]) != 0 {
			t.Errorf("%s → %s should be invalid", names[invalid[0]], names[invalid[1]])
		}
	}
}

func TestCountsMergeByAddition(t *testing.T) {
	a, b := NewCounts(), NewCounts()
	for i := range 30 {
		dst := a
		if i%3 == 0 {
			dst = b
		}
		if err := dst.AddTrace([]State{0, 0, 0, 0, 0, 0, 0b10}); err != nil {
			t.Fatal(err)
		}
	}
	a.Merge(b)
	if !a.Equal(stoveCounts(t)) {
		t.Fatalf("merged %v, want the table of all 30 traces", a.Pairs())
	}
	if err := a.AddTrace([]State{0, End}); err == nil {
		t.Error("a trace with end inside accepted")
	}
}

// Remove takes counts back down to nothing: a table with a move counted
// and removed again equals one that never counted it.
func TestCountsRemoveUndoesAdd(t *testing.T) {
	c := stoveCounts(t)
	c.Add(0b10, End, 2)
	c.Add(0b01, End, 1)
	c.Remove(0b10, End, 2)
	c.Remove(0b01, End, 5)
	if !c.Equal(stoveCounts(t)) {
		t.Fatalf("after adding and removing: %v", c.Pairs())
	}
}

func TestFrequencyModeMakesUnleftStatesAbsorbing(t *testing.T) {
	spec := stoveSpec()
	spec.Smoothing = Smoothing{Mode: Frequency}
	m, err := Learn(spec, stoveCounts(t))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Chain()
	if c.Prob(0, 0) != 150.0/180 || c.Prob(0, 1) != 30.0/180 || c.Prob(1, 4) != 1 {
		t.Errorf("rows: %v %v", c.Prob(0, 0), c.Prob(0, 1))
	}
	if !c.Absorbing(2) || !c.Absorbing(3) {
		t.Error("never-left states 10 and 11 should be absorbing")
	}
	notes := strings.Join(m.Notes(), "\n")
	if !strings.Contains(notes, "state 10 was never left") || !strings.Contains(notes, "state 11 was never left") {
		t.Errorf("notes: %s", notes)
	}
}

func TestRulesShapeTheRows(t *testing.T) {
	spec := Spec{
		Predicates: []string{"broken", "on", "lid"},
		Smoothing:  Smoothing{Alpha: 0.5},
		Rules: Rules{
			Irreversible: []string{"broken"},
			Forbidden:    [][2]string{{"000", "010"}},
			Absorbing:    "broken and lid",
			ValidStates:  "not (on and lid)",
		},
	}
	counts := NewCounts()
	if err := counts.AddTrace([]State{0, 0b100, 0b101}); err != nil { // 000 → 001 → 101 (absorbing)
		t.Fatal(err)
	}
	m, err := Learn(spec, counts)
	if err != nil {
		t.Fatal(err)
	}
	// Valid states: the 8 valuations less 011 and 111 (on and lid), plus end.
	if len(m.States()) != 7 {
		t.Fatalf("states %v", m.States())
	}
	idx := func(name string) int {
		s, _ := ParseState(name, 3)
		i, ok := m.Index(s)
		if !ok {
			t.Fatalf("no state %s", name)
		}
		return i
	}
	c := m.Chain()
	if c.Prob(idx("000"), idx("010")) != 0 {
		t.Error("forbidden 000 → 010 has probability")
	}
	if c.Prob(idx("100"), idx("000")) != 0 {
		t.Error("broken turned back")
	}
	if !c.Absorbing(idx("101")) || m.Learned(idx("101")) {
		t.Error("broken and lid should be absorbing")
	}
	// 000's valid successors: itself, end, 100, 001, 110, 101 (not 010: forbidden);
	// n_000 = 1 (to 001); α = 0.5: P(001|000) = 1.5/(1 + 6·0.5).
	if k := m.ValidSuccessors(idx("000")); k != 6 {
		t.Errorf("k_000 = %d, want 6", k)
	}
	if p := c.Prob(idx("000"), idx("001")); p != 1.5/4 {
		t.Errorf("P(001|000) = %v, want %v", p, 1.5/4)
	}
}

func TestLearnRejectsCountsTheRulesForbid(t *testing.T) {
	counts := NewCounts()
	counts.Add(0, 0b11, 2) // 00 → 11: two predicates change
	_, err := Learn(stoveSpec(), counts)
	if err == nil || !strings.Contains(err.Error(), "counts 00 → 11 (2): an invalid transition: 2 predicates change, max_changes is 1") {
		t.Fatalf("err = %v", err)
	}
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Predicates: stovePredicates, Smoothing: Smoothing{Mode: "bayes"}}, `smoothing.mode "bayes": valid values are "laplace" and "frequency"`},
		{Spec{Predicates: stovePredicates, Smoothing: Smoothing{Alpha: -1}}, "smoothing.alpha -1"},
		{Spec{Predicates: stovePredicates, Rules: Rules{Absorbing: "knob"}}, `rules.absorbing: col 1: unknown predicate "knob"`},
		{Spec{Predicates: stovePredicates, Rules: Rules{Irreversible: []string{"x"}}}, `rules.irreversible: unknown predicate "x"`},
		{Spec{Predicates: stovePredicates, Rules: Rules{Forbidden: [][2]string{{"0", "11"}}}}, `rules.forbidden[0]: state "0"`},
		{Spec{Predicates: []string{"a", "a"}}, `predicates[1] "a": empty or repeated`},
	} {
		if _, err := Learn(tc.spec, NewCounts()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

func TestObservedStateSpaceAboveTwelvePredicates(t *testing.T) {
	preds := make([]string, 13)
	for i := range preds {
		preds[i] = string(rune('a' + i))
	}
	counts := NewCounts()
	if err := counts.AddTrace([]State{0, 1, 3}); err != nil {
		t.Fatal(err)
	}
	m, err := Learn(Spec{Predicates: preds}, counts)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.States()); got != 4 {
		t.Fatalf("%d states, want the 3 observed and end", got)
	}
	if _, ok := m.Index(State(7)); ok {
		t.Error("an unobserved state is in the space")
	}
}

func TestStateNames(t *testing.T) {
	s, err := ParseState("01", 2)
	if err != nil || s != 0b10 || s.Name(2) != "01" {
		t.Fatalf("ParseState(01) = %b, %v", s, err)
	}
	if _, err := ParseState("012", 3); err == nil {
		t.Error("012 accepted")
	}
	if s, _ := ParseState("end", 2); s != End || StateOf([]bool{false, true}) != 0b10 {
		t.Error("end or StateOf")
	}
}
