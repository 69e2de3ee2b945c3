// SPDX-License-Identifier: Apache-2.0

package texpr

import "fmt"

// Capture mode: the monitor of an expression that uses a capture predicate.
// Its threads differ by their dicts, which the weighted, merged threads of
// eval.go cannot tell apart, so its roots run on the tree evaluator
// (tree.go), where every match carries its dict and its record: verdicts get
// their trees as they are decided, without a replay. The thread cap counts
// the sub-evaluations the live roots created (which their records may keep);
// past it every live root is abandoned with an ERROR verdict, as in the fast
// mode.

// dictState is a monitor's capture mode: its live roots, the evaluations
// the thread cap still allows them, and the history's captures (beside
// Monitor.hist, from the same base).
type dictState struct {
	roots []dictRoot
	left  int
	caps  []Captures
}

// dictRoot is a live top-level evaluation in capture mode.
type dictRoot struct {
	eval    treeEval
	rp      *replay
	start   int
	matched bool
}

// stepDict is Step in capture mode, ev being the event just appended to the
// history.
func (m *Monitor) stepDict(event Event) {
	ev := &event
	run := m.state()
	if run.dm == nil {
		run.dm = &dictState{left: m.a.MaxThreads}
	}
	dm := run.dm
	dm.caps = append(dm.caps, ev.Captures)
	defer func() {
		if r := recover(); r != nil {
			if r != errTreeBudget {
				panic(r)
			}
			m.abandonDict()
		}
	}()
	live := dm.roots[:0]
	for _, r := range dm.roots {
		if m.stepDictRoot(&r, ev) {
			live = append(live, r)
		}
	}
	clear(dm.roots[len(live):])
	dm.roots = live
	if m.a.Anchored && m.cycle > 1 {
		return
	}
	if m.untriggered(ev) {
		return
	}
	r := dictRoot{rp: &replay{left: &dm.left, captures: m.a.Captures}, start: m.cycle}
	r.eval = r.rp.start(m.a.Expr, m.cycle, Dict{})
	if m.stepDictRoot(&r, ev) {
		dm.roots = append(dm.roots, r)
	}
}

// stepDictRoot advances a root and reports its verdicts; a root that
// terminated gives its evaluations back to the budget.
func (m *Monitor) stepDictRoot(r *dictRoot, ev *Event) bool {
	ms, alive := r.eval.step(m.cycle, ev)
	if len(ms) > 0 {
		r.matched = true
		v := Verdict{Kind: Match, Start: r.start, End: m.cycle, Count: uint64(len(ms)), Violation: m.a.Never}
		m.decided(v, m.treesIfWanted(v, func() []*Record { return ms }))
	}
	if !alive && !r.matched {
		v := Verdict{Kind: Failure, Start: r.start, End: m.cycle, Violation: !m.a.Never}
		m.decided(v, m.treesIfWanted(v, func() []*Record { return []*Record{r.eval.record(m.cycle)} }))
	}
	if !alive {
		m.run.dm.left += r.rp.spent
	}
	return alive
}

// treesIfWanted is the verdict's trees when it is reported with them; nil
// otherwise (and emit, seeing nil in capture mode, does not replay).
func (m *Monitor) treesIfWanted(v Verdict, trees func() []*Record) []*Record {
	if (v.Violation || m.a.Passes) && m.wantsTree(v) {
		return trees()
	}
	return noTrees
}

// noTrees marks a verdict whose trees are not wanted: not nil, so that emit
// does not replay.
var noTrees = []*Record{}

// abandonDict drops every live root after the thread cap was exceeded.
func (m *Monitor) abandonDict() {
	dm := m.run.dm
	first := m.cycle
	if len(dm.roots) > 0 {
		first = dm.roots[0].start
	}
	n := len(dm.roots) + 1 // the roots, and the one starting at this event
	m.emit(Verdict{Kind: Error, Start: first, End: m.cycle, Count: uint64(n), Violation: true,
		TreeNote: fmt.Sprintf("more than %d live threads: %d evaluations started at cycles %d..%d abandoned",
			m.a.MaxThreads, n, first, m.cycle)}, noTrees)
	clear(dm.roots)
	dm.roots = dm.roots[:0]
	dm.left = m.a.MaxThreads
	m.errors++
}

// finishDict applies the end policy to the live roots of capture mode.
func (m *Monitor) finishDict() {
	dm := m.dm()
	if dm == nil {
		return
	}
	for _, r := range dm.roots {
		if !r.matched {
			m.finishLive(r.start, func() *Record { return r.eval.record(m.cycle) })
		}
	}
	clear(dm.roots)
	dm.roots = dm.roots[:0]
	dm.left = m.a.MaxThreads
}

// untriggered decides, without building an evaluation, the root of
// "p >> x" or "p + x" at an event where p's bit is clear: the vacuous match,
// or a failure, whatever the dict (a capture predicate needs its bit), as
// machine.begin does in the fast mode. A verdict reported with its tree
// takes the tree evaluator's way.
func (m *Monitor) untriggered(ev *Event) bool {
	x := m.a.Expr
	if (x.Op != OpCond && x.Op != OpConcat) || x.L.Op != OpPred || x.L.Index < 0 || ev.Bits&(1<<uint(x.L.Index)) != 0 {
		return false
	}
	v := Verdict{Kind: Failure, Start: m.cycle, End: m.cycle, Violation: !m.a.Never}
	if x.Op == OpCond {
		v = Verdict{Kind: Match, Start: m.cycle, End: m.cycle, Count: 1, Violation: m.a.Never}
	}
	if (v.Violation || m.a.Passes) && m.wantsTree(v) {
		return false
	}
	m.decided(v, noTrees)
	return true
}
