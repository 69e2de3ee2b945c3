// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"errors"
	"slices"
)

// What a PENDING evaluation waits for. The monitor keeps only thread counts
// (eval.go), which cannot say it; this replays the sequence with the spec's
// set semantics (§2), memoised per sub-expression and start cycle, so that
// all the pending evaluations of one expression over one sequence share the
// work. It runs only when a pending verdict is explained, never per event.

// Waits tells what the live evaluations of one expression over one finished
// sequence were waiting for. It is not safe for concurrent use.
type Waits struct {
	e      *Expr
	bits   []uint64 // bits[c-1] is cycle c
	memo   map[waitKey]*waitOutcome
	budget int
	spent  bool
}

type waitKey struct {
	e *Expr
	s int
}

// waitOutcome is an evaluation of a sub-expression over the sequence: its
// distinct match end cycles (sorted), its termination cycle (live when it
// outlives the sequence) and the sub-expressions whose evaluations would
// start at the cycle after the last.
type waitOutcome struct {
	ends  []int
	term  int
	waits []*Expr
}

const liveTerm = int(^uint(0) >> 1)

var errWaitBudget = errors.New("waits: budget exceeded")

// NewWaits prepares to explain evaluations of e over the events whose
// predicate bits are bits, cycle 1 first. budget bounds the work of all its
// calls together (match ends visited); past it, Of answers false.
func NewWaits(e *Expr, bits []uint64, budget int) *Waits {
	return &Waits{e: e, bits: bits, memo: map[waitKey]*waitOutcome{}, budget: budget}
}

// Of returns what the evaluation started at cycle start waits for: the
// sub-expressions whose evaluations would begin at the next event, distinct,
// in the expression's order (a predicate, or a larger sub-expression such as
// the right side of a +). It is empty when that evaluation terminated within
// the sequence. ok is false when the budget ran out before it could tell,
// or start is not a cycle of the sequence.
func (w *Waits) Of(start int) (waits []*Expr, ok bool) {
	if w.spent || start < 1 || start > len(w.bits) {
		return nil, false
	}
	defer func() {
		if r := recover(); r != nil {
			if r != errWaitBudget {
				panic(r)
			}
			w.spent, waits, ok = true, nil, false
		}
	}()
	o := w.eval(w.e, start)
	return inTreeOrder(w.e, o.waits), true
}

func (w *Waits) spend(n int) {
	w.budget -= n + 1
	if w.budget < 0 {
		panic(errWaitBudget)
	}
}

func (w *Waits) eval(e *Expr, s int) *waitOutcome {
	k := waitKey{e, s}
	if o, ok := w.memo[k]; ok {
		return o
	}
	o := w.evalNew(e, s)
	w.spend(len(o.ends))
	w.memo[k] = o
	return o
}

func (w *Waits) evalNew(e *Expr, s int) *waitOutcome {
	if s > len(w.bits) {
		return &waitOutcome{term: liveTerm, waits: []*Expr{e}}
	}
	switch e.Op {
	case OpPred:
		if e.Index < 0 || w.bits[s-1]&(1<<uint(e.Index)) != 0 {
			return &waitOutcome{ends: []int{s}, term: s}
		}
		return &waitOutcome{term: s}
	case OpConcat, OpFusion, OpCond:
		return w.seq(e, s)
	case OpAlt, OpAnd, OpIsect:
		return w.pair(e, s)
	case OpRepeat:
		return w.repeat(e, s)
	case OpFirst:
		a := w.eval(e.L, s)
		if len(a.ends) > 0 {
			return &waitOutcome{ends: []int{a.ends[0]}, term: a.ends[0]}
		}
		return &waitOutcome{term: a.term, waits: a.waits}
	case OpOnce:
		a := w.eval(e.L, s)
		return &waitOutcome{ends: a.ends, term: a.term, waits: a.waits}
	case OpNot:
		a := w.eval(e.L, s)
		switch {
		case a.term == liveTerm:
			return &waitOutcome{term: liveTerm, waits: a.waits}
		case len(a.ends) == 0:
			return &waitOutcome{ends: []int{a.term}, term: a.term}
		}
		return &waitOutcome{term: a.term}
	}
	panic("texpr: unknown operator")
}

func (w *Waits) seq(e *Expr, s int) *waitOutcome {
	a := w.eval(e.L, s)
	if e.Op == OpCond && len(a.ends) == 0 && a.term != liveTerm {
		return &waitOutcome{ends: []int{a.term}, term: a.term}
	}
	out := &waitOutcome{term: a.term, waits: a.waits}
	for _, k := range a.ends {
		next := k + 1
		if e.Op == OpFusion {
			next = k
		}
		b := w.eval(e.R, next)
		out.ends = append(out.ends, b.ends...)
		out.term = max(out.term, b.term)
		out.waits = union(out.waits, b.waits)
	}
	out.ends = distinct(out.ends)
	return out
}

func (w *Waits) pair(e *Expr, s int) *waitOutcome {
	a, b := w.eval(e.L, s), w.eval(e.R, s)
	out := &waitOutcome{term: max(a.term, b.term), waits: union(slices.Clip(a.waits), b.waits)}
	switch e.Op {
	case OpAlt:
		out.ends = distinct(append(append([]int(nil), a.ends...), b.ends...))
	case OpAnd:
		for _, x := range a.ends {
			if _, found := slices.BinarySearch(b.ends, x); found {
				out.ends = append(out.ends, x)
			}
		}
	case OpIsect:
		// a pair ends at the later of its two ends: an end of one side is
		// an end of the pair when the other side has an end no later.
		if len(a.ends) > 0 && len(b.ends) > 0 {
			for _, x := range a.ends {
				if x >= b.ends[0] {
					out.ends = append(out.ends, x)
				}
			}
			for _, x := range b.ends {
				if x >= a.ends[0] {
					out.ends = append(out.ends, x)
				}
			}
			out.ends = distinct(out.ends)
		}
	}
	return out
}

// repeat walks the iterations breadth first: the cycles each depth's
// iterations start at. Every match ends no earlier than it starts, so the
// start cycles grow with depth and the walk stops past the sequence.
func (w *Waits) repeat(e *Expr, s int) *waitOutcome {
	out := &waitOutcome{term: s}
	if e.Min == 0 {
		out.ends = []int{s}
	}
	starts := []int{s}
	for depth := 1; depth <= e.Max && len(starts) > 0; depth++ {
		var next []int
		for _, t := range starts {
			r := w.eval(e.L, t)
			out.term = max(out.term, r.term)
			out.waits = union(out.waits, r.waits)
			for _, k := range r.ends {
				if depth >= e.Min {
					out.ends = append(out.ends, k)
				}
				if depth < e.Max {
					next = append(next, k+1)
				}
			}
		}
		w.spend(len(next))
		starts = distinct(next)
	}
	out.ends = distinct(out.ends)
	return out
}

// distinct sorts and deduplicates in place.
func distinct(xs []int) []int {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// union adds the expressions of b missing from a; a is never a memoised
// outcome's slice, which would be shared.
func union(a, b []*Expr) []*Expr {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(slices.Clip(a), x)
		}
	}
	return a
}

// inTreeOrder lists the nodes of set in e's pre-order.
func inTreeOrder(e *Expr, set []*Expr) []*Expr {
	if len(set) == 0 {
		return nil
	}
	var out []*Expr
	var walk func(x *Expr)
	walk = func(x *Expr) {
		if x == nil || len(out) == len(set) {
			return
		}
		if slices.Contains(set, x) {
			out = append(out, x)
		}
		walk(x.L)
		walk(x.R)
	}
	walk(e)
	return out
}
