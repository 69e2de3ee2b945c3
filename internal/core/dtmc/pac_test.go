// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"bytes"
	"strings"
	"testing"
)

func TestTransitionBoundValues(t *testing.T) {
	for _, tc := range []struct {
		n, m       uint64
		eps, delta float64
		want       float64
	}{
		{100, 50, 0.1, 0.01, 260.2063},
		{100, 0, 0.1, 0.01, 65.9346},
		{100, 10, 0.1, 0.01, 147.1755},
		{100, 90, 0.05, 0.01, 489.8000},
	} {
		if got := TransitionBound(tc.n, tc.m, tc.eps, tc.delta); !near(got, tc.want, 5e-5) {
			t.Errorf("H(%d, %d, %g, %g) = %.4f, want %.4f", tc.n, tc.m, tc.eps, tc.delta, got, tc.want)
		}
	}
	if got := TransitionBound(100, 50, 0.9, 0.01); got != 0 {
		t.Errorf("H with a large ε = %v, want the clamp at 0", got)
	}
}

func TestOkamoto(t *testing.T) {
	if got := OkamotoTraces(0.1, 0.05); got != 185 {
		t.Errorf("Okamoto(0.1, 0.05) = %d, want 185", got)
	}
}

func TestStovePAC(t *testing.T) {
	r, err := learnStove(t).PAC(0.1, 0.05, mustSolver(t, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if r.NumStates != 5 || r.MaxK != 4 || len(r.States) != 4 {
		t.Fatalf("report %+v", r)
	}
	if !near(r.TauMax, 2390.0/349, 1e-9) || !near(r.BHat, 13.70, 0.005) {
		t.Errorf("τ_max = %.10g (want 2390/349 = %.10g), B̂ = %.4g (want 13.70)", r.TauMax, 2390.0/349, r.BHat)
	}
	s0 := r.States[0]
	if s0.Name != "00" || s0.Visits != 180 || !near(s0.HStar, 189.562, 5e-4) || s0.Satisfied {
		t.Errorf("s0: %+v, want 180 visits, H* = 189.562, not satisfied", s0)
	}
	if r.Certified {
		t.Error("the stove model is certified")
	}
	var out bytes.Buffer
	if err := r.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"B^ = 1/2 * 4 * 6.84814 = 13.7", "00", "189.562", "not certified: 4 of 4 learned states need more visits"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestPACCertifiesWithEnoughData(t *testing.T) {
	// One predicate, a coin: 0 → 1 and 1 → end, visited very often.
	counts := NewCounts()
	for range 2000 {
		if err := counts.AddTrace([]State{0, 1}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Learn(Spec{Predicates: []string{"x"}, Unsafe: "x"}, counts)
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.PAC(0.1, 0.05, mustSolver(t, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	// τ: from 0, the maybe state, to leave: P(0|0) = 1/2002 → τ = 2002/2001;
	// B̂ = ½·3·τ; 0 needs (1.1 B̂)²·H* ≈ 2.7·54 ≈ 148 visits and has 2000.
	if !r.States[0].Satisfied || r.States[0].More != 0 {
		t.Errorf("state 0: %+v (B̂ %v)", r.States[0], r.BHat)
	}
	if !r.States[1].Satisfied || !r.Certified {
		t.Errorf("state 1: %+v, certified %v", r.States[1], r.Certified)
	}
	if _, err := m.PAC(0, 0.05, mustSolver(t, Options{})); err == nil {
		t.Error("epsilon 0 accepted")
	}
}
