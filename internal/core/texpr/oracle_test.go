// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The oracle: set semantics by recursion over the expression, written from the
// spec's table and nothing else. For an evaluation of e started at s over N
// events it gives the multiset of match end cycles and the termination cycle
// (live: math.MaxInt).

const live = math.MaxInt

type outcome struct {
	ends map[int]uint64
	term int
}

type oracle struct {
	n   int
	sig func(pred, cycle int) bool
}

func (o oracle) eval(e *Expr, s int) outcome {
	if s > o.n {
		return outcome{nil, live} // it waits for an event that never comes
	}
	switch e.Op {
	case OpPred:
		if e.Index < 0 || o.sig(e.Index, s) {
			return outcome{map[int]uint64{s: 1}, s}
		}
		return outcome{nil, s}
	case OpConcat, OpFusion, OpCond:
		return o.seq(e, s)
	case OpAlt, OpAnd, OpIsect:
		return o.pair(e, s)
	case OpRepeat:
		return o.repeat(e, s)
	case OpFirst:
		// the first match ends the evaluation; one, whatever a's count there
		a := o.eval(e.L, s)
		if len(a.ends) == 0 {
			return outcome{nil, a.term}
		}
		k := math.MaxInt
		for end := range a.ends {
			k = min(k, end)
		}
		return outcome{map[int]uint64{k: 1}, k}
	case OpOnce:
		a := o.eval(e.L, s)
		out := outcome{map[int]uint64{}, a.term}
		for end := range a.ends {
			out.ends[end] = 1
		}
		return out
	case OpNot:
		a := o.eval(e.L, s)
		switch {
		case a.term == live:
			return outcome{nil, live}
		case len(a.ends) == 0:
			return outcome{map[int]uint64{a.term: 1}, a.term}
		}
		return outcome{nil, a.term}
	}
	panic("unknown op")
}

func (o oracle) seq(e *Expr, s int) outcome {
	a := o.eval(e.L, s)
	if e.Op == OpCond && len(a.ends) == 0 && a.term != live {
		return outcome{map[int]uint64{a.term: 1}, a.term}
	}
	out := outcome{map[int]uint64{}, a.term}
	for k, w := range a.ends {
		next := k + 1
		if e.Op == OpFusion {
			next = k
		}
		b := o.eval(e.R, next)
		for eb, wb := range b.ends {
			out.ends[eb] += w * wb
		}
		out.term = max(out.term, b.term)
	}
	return out
}

func (o oracle) pair(e *Expr, s int) outcome {
	a, b := o.eval(e.L, s), o.eval(e.R, s)
	out := outcome{map[int]uint64{}, max(a.term, b.term)}
	for ea, wa := range a.ends {
		switch e.Op {
		case OpAlt:
			out.ends[ea] += wa
		case OpAnd:
			if b.ends[ea] > 0 {
				out.ends[ea] = 1
			}
		case OpIsect:
			for eb, wb := range b.ends {
				out.ends[max(ea, eb)] += wa * wb
			}
		}
	}
	if e.Op == OpAlt {
		for eb, wb := range b.ends {
			out.ends[eb] += wb
		}
	}
	return out
}

func (o oracle) repeat(e *Expr, s int) outcome {
	out := outcome{map[int]uint64{}, s}
	if e.Min == 0 {
		out.ends[s] = 1
	}
	var iterate func(depth, start int, weight uint64)
	iterate = func(depth, start int, weight uint64) {
		r := o.eval(e.L, start)
		out.term = max(out.term, r.term)
		for k, w := range r.ends {
			if depth >= e.Min {
				out.ends[k] += w * weight
			}
			if depth < e.Max {
				iterate(depth+1, k+1, w*weight)
			}
		}
	}
	if e.Max > 0 {
		iterate(1, s, 1)
	}
	return out
}

// verdicts is a canonical, sorted multiset of verdict lines.
type verdicts []string

func oracleVerdicts(e *Expr, never bool, n int, sig func(int, int) bool) verdicts {
	o := oracle{n, sig}
	var out verdicts
	for s := 1; s <= n; s++ {
		r := o.eval(e, s)
		for end, w := range r.ends {
			for range w {
				out = append(out, fmt.Sprintf("M %d/%d", s, end))
			}
		}
		if len(r.ends) == 0 && r.term != live {
			out = append(out, fmt.Sprintf("F %d/%d", s, r.term))
		}
		if len(r.ends) == 0 && r.term == live {
			out = append(out, fmt.Sprintf("P %d", s))
		}
	}
	slices.Sort(out)
	return out
}

// engineVerdicts runs the monitor; trees are checked against the verdicts on
// the way when asked for.
func engineVerdicts(t testing.TB, e *Expr, evs []Event, trees bool) verdicts {
	a := Assertion{Expr: e, Passes: true}
	if trees {
		a.Trees = TreesAll
	}
	m := NewMonitor(a)
	var out verdicts
	collect := func(vs []Verdict) {
		for _, v := range vs {
			if trees {
				checkTrees(t, e, v)
			}
			switch v.Kind {
			case Match:
				for range v.Count {
					out = append(out, fmt.Sprintf("M %d/%d", v.Start, v.End))
				}
			case Failure:
				out = append(out, fmt.Sprintf("F %d/%d", v.Start, v.End))
			case Pending:
				out = append(out, fmt.Sprintf("P %d", v.Start))
			default:
				t.Fatalf("%s: unexpected verdict %+v", e, v)
			}
		}
	}
	for _, ev := range evs {
		collect(m.Step(ev))
	}
	collect(m.Finish())
	if m.Threads() != 0 {
		t.Fatalf("%s: %d threads leaked after Finish", e, m.Threads())
	}
	slices.Sort(out)
	return out
}

// checkTrees: the tree evaluator agrees with the fast one on every verdict.
func checkTrees(t testing.TB, e *Expr, v Verdict) {
	switch v.Kind {
	case Match:
		if uint64(len(v.Trees)) != v.Count {
			t.Fatalf("%s: MATCH %d/%d counts %d, its replay found %d", e, v.Start, v.End, v.Count, len(v.Trees))
		}
	case Failure:
		if len(v.Trees) != 1 || v.Trees[0].Count != 0 {
			t.Fatalf("%s: FAILURE %d/%d has trees %v", e, v.Start, v.End, v.Trees)
		}
	default:
		return
	}
	for _, r := range v.Trees {
		if r.Start != v.Start || r.End != v.End || r.Label != label(e) {
			t.Fatalf("%s: verdict %v %d/%d, tree root %s (%d/%d)", e, v.Kind, v.Start, v.End, r.Label, r.Start, r.End)
		}
	}
}

func randomExpr(r *rand.Rand, depth int) *Expr {
	if depth == 0 || r.IntN(4) == 0 {
		i := r.IntN(4) - 1
		if i < 0 {
			return &Expr{Op: OpPred, Name: OkName, Index: -1}
		}
		return &Expr{Op: OpPred, Name: string(rune('a' + i)), Index: i}
	}
	switch op := Op(1 + r.IntN(10)); op {
	case OpRepeat:
		lo := r.IntN(3)
		return &Expr{Op: OpRepeat, L: randomExpr(r, depth-1), Min: lo, Max: lo + r.IntN(3)}
	case OpNot, OpFirst, OpOnce:
		return &Expr{Op: op, L: randomExpr(r, depth-1)}
	default:
		return &Expr{Op: op, L: randomExpr(r, depth-1), R: randomExpr(r, depth-1)}
	}
}

func randomEvents(r *rand.Rand, n int) []Event {
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = Event{Bits: r.Uint64() & 7, Time: int64(10 * (i + 1)), Ref: i + 1}
	}
	return evs
}

func bitsOf(evs []Event) func(int, int) bool {
	return func(pred, cycle int) bool { return evs[cycle-1].Bits&(1<<uint(pred)) != 0 }
}

func TestEngineAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 4000 {
		e := randomExpr(r, 1+r.IntN(4))
		evs := randomEvents(r, 1+r.IntN(12))
		want := oracleVerdicts(e, false, len(evs), bitsOf(evs))
		got := engineVerdicts(t, e, evs, i%4 == 0)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: %s over %v\n got  %s\n want %s", i, e, evs, strings.Join(got, ", "), strings.Join(want, ", "))
		}
	}
}

// With on_end fail, every evaluation live at the end becomes a failure whose
// tree stays within the events seen.
func TestFailAtEndTrees(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		e := randomExpr(r, 1+r.IntN(4))
		evs := randomEvents(r, 1+r.IntN(10))
		want := 0
		for _, v := range oracleVerdicts(e, false, len(evs), bitsOf(evs)) {
			if strings.HasPrefix(v, "P ") {
				want++
			}
		}
		m := NewMonitor(Assertion{Expr: e, OnEnd: EndFail, Trees: TreesViolations})
		for _, ev := range evs {
			m.Step(ev)
		}
		got := m.Finish()
		if len(got) != want {
			t.Fatalf("case %d: %s: %d failures at the end, want %d", i, e, len(got), want)
		}
		for _, v := range got {
			if v.Kind != Failure || v.End != len(evs) || len(v.Trees) != 1 {
				t.Fatalf("case %d: %s: verdict %+v", i, e, v)
			}
			checkWithin(t, e, v.Trees[0], len(evs))
			_ = v.Trees[0].Format(m.Timestamp) // every cycle it names is in the history
		}
	}
}

func checkWithin(t *testing.T, e *Expr, r *Record, n int) {
	if r.Start < 1 || r.End > n || r.Start > r.End {
		t.Fatalf("%s: record %s (%d/%d) outside 1..%d", e, r.Label, r.Start, r.End, n)
	}
	for _, c := range r.Children {
		checkWithin(t, e, c, n)
	}
}
