// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"math/rand/v2"
	"testing"
)

func TestTriggersByOperator(t *testing.T) {
	preds := []string{"a", "b", "c"}
	const a, b, c = 1, 2, 4
	for _, tc := range []struct {
		expr string
		mask uint64
		any  bool
		idle uint64
	}{
		{"a", a, false, 0},
		{"ok", 0, false, 1},
		{"a >> b + c", a, false, 1}, // te1's shape: FIRST = {xferToGreeting}
		{"a + b", a, false, 0},
		{"a / b", a, false, 0},
		{"a * 0 / b", b, false, 0},
		{"ok / b", b, false, 0},
		{"a | b", a | b, false, 0},
		{"a & ok", a, false, 0},
		{"a ^ b", a | b, false, 0},
		{"~(a + b)", a, false, 1},
		{"~ok", 0, false, 0},
		{"a * (0,1)", a, false, 1},
		{"a * (0,3)", a, false, 1},
		{"a * 0", 0, false, 1},
		{"(a | ok) * 1", a, false, 1},
		{"(a | ok) * 2", a, true, 0},
		{"ok + a", 0, true, 0},
		{"a * (0,1) + b", a, true, 0},
		{"~a >> b", a, true, 0},
		{"(a >> b) + c", a, true, 0},
		{"c | ok + a", c, true, 0},
	} {
		e, err := Parse(tc.expr, preds)
		if err != nil {
			t.Fatal(err)
		}
		got := firstOf(e)
		if got.mask != tc.mask || got.any != tc.any || (!tc.any && got.idle != tc.idle) {
			t.Errorf("%s: mask %03b any %v idle %d, want %03b %v %d", tc.expr, got.mask, got.any, got.idle, tc.mask, tc.any, tc.idle)
		}
	}
}

// The property that makes "triggered" mean something: an evaluation started
// at an event that misses the mask (of an expression that is not every-event)
// terminates at that event with its idle outcome, by the oracle and by the
// engine; and the mask only names predicates of the expression.
func TestUntriggeredEvaluationsEndAtOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	checked := 0
	for i := range 4000 {
		e := randomExpr(r, 1+r.IntN(4))
		f := firstOf(e)
		if f.mask&^usedPredicates(e) != 0 {
			t.Fatalf("%s: mask %b names predicates it does not use", e, f.mask)
		}
		if f.any {
			continue
		}
		evs := randomEvents(r, 1+r.IntN(12))
		o := oracle{len(evs), bitsOf(evs)}
		byStart := engineByStart(e, evs)
		for s, ev := range evs {
			s++
			if ev.Bits&f.mask != 0 {
				continue
			}
			checked++
			got := o.eval(e, s)
			if got.term != s || got.ends[s] != f.idle || len(got.ends) > 1 || (f.idle == 0 && len(got.ends) != 0) {
				t.Fatalf("case %d: %s at %d over %v: oracle ends %v term %d, want idle %d at %d", i, e, s, evs, got.ends, got.term, f.idle, s)
			}
			want := verdictAt{Failure, s, s, 0}
			if f.idle > 0 {
				want = verdictAt{Match, s, s, f.idle}
			}
			if vs := byStart[s]; len(vs) != 1 || vs[0] != want {
				t.Fatalf("case %d: %s at %d over %v: engine %+v, want %+v", i, e, s, evs, vs, want)
			}
		}
	}
	if checked < 5000 {
		t.Fatalf("only %d untriggered starts checked", checked)
	}
}

type verdictAt struct {
	kind       Kind
	start, end int
	count      uint64
}

// engineByStart runs the monitor, every verdict reported, and files the
// verdicts by start cycle, stripped to kind, cycles and count.
func engineByStart(e *Expr, evs []Event) map[int][]verdictAt {
	m := NewMonitor(Assertion{Expr: e, Passes: true})
	out := map[int][]verdictAt{}
	add := func(vs []Verdict) {
		for _, v := range vs {
			out[v.Start] = append(out[v.Start], verdictAt{v.Kind, v.Start, v.End, v.Count})
		}
	}
	for _, ev := range evs {
		add(m.Step(ev))
	}
	add(m.Finish())
	return out
}

func usedPredicates(e *Expr) uint64 {
	if e == nil {
		return 0
	}
	if e.Op == OpPred && e.Index >= 0 {
		return 1 << uint(e.Index)
	}
	return usedPredicates(e.L) | usedPredicates(e.R)
}
