// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"math"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/internal/core/formula"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestAlwaysSafeOnTheLearnedStove(t *testing.T) {
	m := learnStove(t)
	sf, err := m.Solve(Property{Kind: AlwaysSafe, Unsafe: "fork_on_burner and knob_on"}, mustSolver(t, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range []float64{335.0 / 349, 338.0 / 349, 228.0 / 349, 0, 1} {
		if !near(sf.PSafe(s), want, 1e-12) {
			t.Errorf("P_safe(%s) = %.15g, want %.15g", m.StateName(s), sf.PSafe(s), want)
		}
	}
	// Evidence at s2 = 10: to s3 (unsafe) 1/4·1 beats s0 1/4·14/349 and s2 1/4·121/349.
	e := sf.Evidence(2)
	if e.State != 3 || e.Prob != 0.25 || !near(e.Risk, 0.25, 1e-15) {
		t.Errorf("evidence at 10: %+v", e)
	}
	// At s0: s0 contributes 151/184·14/349, s1 31/184·11/349, s2 1/184·121/349.
	if e := sf.Evidence(0); e.State != 0 || e.Prob != 151.0/184 {
		t.Errorf("evidence at 00: %+v", e)
	}
}

func TestBoundedSafety(t *testing.T) {
	m := learnStove(t)
	sf, err := m.Solve(Property{Kind: Bounded, Unsafe: "fork_on_burner and knob_on", Horizon: 2}, mustSolver(t, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if !near(sf.PSafe(0), 1-79.0/12512, 1e-15) || !near(sf.PSafe(2), 1-5.0/16, 1e-15) {
		t.Errorf("P_safe≤2: %v %v", sf.PSafe(0), sf.PSafe(2))
	}
}

// v3 is spec V3's chain: 0 → 1; 1 → 1 (2/5), 1 → 2 (3/5); 2 → 2.
func v3(t *testing.T) *Chain {
	return ratRows([]int{1, 1, 1}, []int{1, 2, 5, 2, 3, 5}, []int{2, 1, 1}).chain(t)
}

func TestV3ResponseProduct(t *testing.T) {
	// Predicates: at0, at2; state i of the chain has the valuation below.
	preds := []string{"at0", "at2"}
	trigF, _ := formula.Parse("at0", preds)
	respF, _ := formula.Parse("at2", preds)
	mon, err := NewMonitor(trigF, respF, 2)
	if err != nil {
		t.Fatal(err)
	}
	trig, resp := []bool{true, false, false}, []bool{false, false, true}
	sf, err := SolveResponse(v3(t), mon, trig, resp, mustSolver(t, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	q0 := mon.Next(Idle, 0b01) // entering state 0
	if mon.String(q0) != "wait2" {
		t.Fatalf("initial monitor state %s, want wait2", mon.String(q0))
	}
	if got := sf.PSafePair(0, q0); !near(got, 3.0/5, 1e-12) || !near(sf.PSafe(0), 3.0/5, 1e-12) {
		t.Errorf("P_safe(0, wait2) = %.15g, want 3/5", got)
	}
	// The path the spec lists: (1,wait1) → (1,viol) with 2/5, (2,idle) with 3/5.
	q1 := mon.Next(q0, 0)
	if mon.String(q1) != "wait1" || mon.String(mon.Next(q1, 0)) != "viol" || mon.Next(q1, 0b10) != Idle {
		t.Errorf("monitor: %s, %s", mon.String(q1), mon.String(mon.Next(q1, 0)))
	}
	if got := sf.PSafePair(1, q1); !near(got, 3.0/5, 1e-12) {
		t.Errorf("P_safe(1, wait1) = %v", got)
	}
	if sf.PSafePair(2, Idle) != 1 || sf.PSafePair(1, mon.Viol()) != 0 {
		t.Error("(2, idle) must be safe and (1, viol) not")
	}
	e := sf.EvidencePair(1, q1)
	if e.State != 1 || mon.String(e.Monitor) != "viol" || !near(e.Prob, 0.4, 1e-15) {
		t.Errorf("evidence at (1, wait1): %+v", e)
	}
}

// With K = 0 the response must come in the trigger's own state.
func TestResponseWithZeroDeadline(t *testing.T) {
	preds := []string{"a", "b"}
	trigF, _ := formula.Parse("a", preds)
	respF, _ := formula.Parse("b", preds)
	mon, _ := NewMonitor(trigF, respF, 0)
	if mon.Next(Idle, 0b01) != mon.Viol() || mon.Next(Idle, 0b11) != Idle {
		t.Error("K = 0")
	}
	if _, err := NewMonitor(trigF, respF, -1); err == nil {
		t.Error("K = -1 accepted")
	}
}

func TestResponseOnTheModel(t *testing.T) {
	m := learnStove(t)
	sf, err := m.Solve(Property{Kind: Response, Trigger: "knob_on", Response: "not knob_on", Within: 1}, mustSolver(t, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	// From 01 (knob on, waiting 1): the knob must be off at the next step, or end
	// comes (which satisfies neither, so it is a violation): next is 00 with
	// 1/34, 01 with 1/34 (viol), 11 with 1/34 (viol), end 31/34 (viol).
	q := sf.Monitor().Next(Idle, 0b10)
	p := sf.PSafePair(1, q)
	if p <= 0 || p >= 1.0/34+1e-12 {
		t.Errorf("P_safe(01, wait1) = %v, want in (0, 1/34]", p)
	}
	if _, err := m.Solve(Property{Kind: Response, Trigger: "knob_on"}, mustSolver(t, Options{})); err == nil || !strings.Contains(err.Error(), "response is required") {
		t.Errorf("missing response: %v", err)
	}
	if _, err := m.Solve(Property{Kind: "eventually"}, mustSolver(t, Options{})); err == nil || !strings.Contains(err.Error(), `property kind "eventually"`) {
		t.Errorf("bad kind: %v", err)
	}
}

func TestV4IrreducibleChainWarns(t *testing.T) {
	c := ratRows([]int{0, 1, 2, 1, 1, 2}, []int{0, 1, 3, 1, 2, 3}).chain(t)
	w := strings.Join(c.Warnings(), "\n")
	if !strings.Contains(w, "irreducible") {
		t.Fatalf("warnings: %q", w)
	}
	p := make([]float64, 2)
	if _, err := mustSolver(t, Options{}).Reach(c, []bool{false, true}, p); err != nil || p[0] != 1 || p[1] != 1 {
		t.Errorf("P(F u) = %v, want 1 everywhere", p)
	}
	if len(stove().chain(t).Warnings()) != 0 {
		t.Error("the stove chain has an absorbing end and deserves no warning")
	}
}
