// SPDX-License-Identifier: Apache-2.0

package pattern

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"

	"github.com/agentguard/agentguard/internal/core/texpr"
)

// Role says what a predicate marks, for handoff_returns: a tool call, or
// control moving (a transfer, or an agent taking control).
type Role int

const (
	OtherRole Role = iota
	ToolRole
	ControlRole
)

// MinePredicate is a predicate the miner may use, in bit order.
type MinePredicate struct {
	Name string
	Role Role
}

// MineOptions bound what Mine proposes.
type MineOptions struct {
	// MaxK is the largest k of response and handoff_returns (default 10).
	MaxK int
	// MinSupport drops assertions exercised in fewer groups (default 1).
	MinSupport int
}

// Mined is one proposed assertion: a pattern that holds on every group.
type Mined struct {
	Pattern Pattern
	// Params are the pattern's parameters as a config writes them.
	Params map[string]any
	// Support is the number of groups in which the assertion was exercised:
	// its x happened (every group for requires, first and never).
	Support int
}

// MineResult is what Mine found.
type MineResult struct {
	Mined []Mined
	// Left are the assertions that hold but are implied by Mined.
	Left []Mined
	// Candidates is how many assertions held on every group before the
	// implied ones were left out; Implied how many were; Refuted how many
	// candidates the engine found violated or pending although the
	// candidates' own count said they held (a disagreement, never expected).
	Candidates, Implied, Refuted int
}

// cand is a candidate assertion: x, y and the set ys are predicate indices.
type cand struct {
	pat     string
	x, y    int
	ys      []int // response's y set, or handoff_returns' tools
	k       int   // k or n
	support int
}

// Mine proposes the assertions of the library that hold on every group
// (each a sequence of predicate bits, bit i for preds[i]): no violation and
// nothing pending, as the engine judges their expansions. Parameters are
// the tightest the groups allow. Assertions implied by others proposed are
// left out (see docs/patterns.md for the rules).
func Mine(preds []MinePredicate, groups [][]uint64, opts MineOptions) (MineResult, error) {
	if opts.MaxK <= 0 {
		opts.MaxK = 10
	}
	opts.MinSupport = max(opts.MinSupport, 1)
	if len(preds) > texpr.MaxPredicates {
		return MineResult{}, fmt.Errorf("%d predicates, at most %d", len(preds), texpr.MaxPredicates)
	}
	m := miner{preds: preds, groups: groups, opts: opts}
	m.index()
	cands := m.candidates()
	var res MineResult
	names := make([]string, len(preds))
	for i, p := range preds {
		names[i] = p.Name
	}
	var held []cand
	for _, c := range cands {
		if c.support < opts.MinSupport {
			continue
		}
		ok, err := m.holds(c, names)
		if err != nil {
			return MineResult{}, err
		}
		if !ok {
			res.Refuted++
			continue
		}
		held = append(held, c)
	}
	res.Candidates = len(held)
	kept, left := prune(held)
	res.Implied = len(left)
	var err error
	if res.Mined, err = m.mined(kept, names); err != nil {
		return MineResult{}, err
	}
	if res.Left, err = m.mined(left, names); err != nil {
		return MineResult{}, err
	}
	return res, nil
}

func (m *miner) mined(cs []cand, names []string) ([]Mined, error) {
	out := make([]Mined, 0, len(cs))
	for _, c := range cs {
		params := m.params(c)
		p, err := New(c.pat, params, names)
		if err != nil {
			return nil, err
		}
		out = append(out, Mined{Pattern: p, Params: params, Support: c.support})
	}
	return out, nil
}

type miner struct {
	preds  []MinePredicate
	groups [][]uint64
	opts   MineOptions
	pos    [][][]int // pos[g][i]: the cycles (1-based) where predicate i holds in group g
}

func (m *miner) index() {
	m.pos = make([][][]int, len(m.groups))
	for g, evs := range m.groups {
		m.pos[g] = make([][]int, len(m.preds))
		for c, b := range evs {
			for ; b != 0; b &= b - 1 {
				i := bits.TrailingZeros64(b)
				if i < len(m.preds) {
					m.pos[g][i] = append(m.pos[g][i], c+1)
				}
			}
		}
	}
}

func (m *miner) at(g, c, i int) bool { return m.groups[g][c-1]>>uint(i)&1 == 1 }

// with counts the groups where predicate i happens.
func (m *miner) with(i int) int {
	n := 0
	for g := range m.groups {
		if len(m.pos[g][i]) > 0 {
			n++
		}
	}
	return n
}

func (m *miner) candidates() []cand {
	var out []cand
	all := len(m.groups)
	var live []int // predicates that held somewhere
	for i := range m.preds {
		if m.with(i) == 0 {
			out = append(out, cand{pat: "never", x: i, y: -1, support: all})
			continue
		}
		live = append(live, i)
	}
	for _, i := range live {
		out = append(out, m.single(i)...)
		noNext := true
		for _, j := range live {
			if i == j {
				continue
			}
			if c, ok := m.before(i, j); ok {
				out = append(out, c)
			}
			if c, ok := m.neverAfter(i, j); ok {
				out = append(out, c)
			}
			if c, ok := m.response(i, j); ok {
				out = append(out, c)
				noNext = noNext && c.k > 1
			}
		}
		if noNext {
			if c, ok := m.responseSet(i, live); ok {
				out = append(out, c)
			}
		}
		if m.preds[i].Role == ControlRole {
			if c, ok := m.handoff(i, live); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// single: requires, first, max_calls and max_consecutive of predicate i.
func (m *miner) single(i int) []cand {
	var out []cand
	all, first, calls, run := true, true, 0, 0
	for g, evs := range m.groups {
		p := m.pos[g][i]
		all = all && len(p) > 0
		first = first && len(evs) > 0 && m.at(g, 1, i)
		calls = max(calls, len(p))
		r := 0
		for c := range evs {
			if r = (r + 1) * b2i(m.at(g, c+1, i)); r > run {
				run = r
			}
		}
	}
	n := len(m.groups)
	if all {
		out = append(out, cand{pat: "requires", x: i, y: -1, support: n})
	}
	if first {
		out = append(out, cand{pat: "first", x: i, y: -1, support: n})
	}
	with := m.with(i)
	out = append(out, cand{pat: "max_calls", x: i, y: -1, k: calls, support: with})
	if run < calls {
		out = append(out, cand{pat: "max_consecutive", x: i, y: -1, k: run, support: with})
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// before(x, y): in every group where y happens, the first event that is x
// or y is x.
func (m *miner) before(x, y int) (cand, bool) {
	for g, evs := range m.groups {
		if len(m.pos[g][y]) == 0 {
			continue
		}
		for c := 1; c <= len(evs); c++ {
			if m.at(g, c, x) {
				break
			}
			if m.at(g, c, y) {
				return cand{}, false
			}
		}
	}
	return cand{pat: "before", x: x, y: y, support: m.with(y)}, true
}

// neverAfter(x, y): no y after the first x.
func (m *miner) neverAfter(x, y int) (cand, bool) {
	for g := range m.groups {
		px, py := m.pos[g][x], m.pos[g][y]
		if len(px) > 0 && len(py) > 0 && py[len(py)-1] > px[0] {
			return cand{}, false
		}
	}
	return cand{pat: "never_after", x: x, y: y, support: m.with(x)}, true
}

// response(x, y): the smallest k such that every x has a y within k
// events; none when some x has no later y, or k > MaxK.
func (m *miner) response(x, y int) (cand, bool) {
	k := 0
	for g := range m.groups {
		py := m.pos[g][y]
		for _, c := range m.pos[g][x] {
			j, _ := slices.BinarySearch(py, c+1)
			if j == len(py) {
				return cand{}, false
			}
			k = max(k, py[j]-c)
		}
	}
	if k > m.opts.MaxK {
		return cand{}, false
	}
	return cand{pat: "response", x: x, y: y, k: k, support: m.with(x)}, true
}

// responseSet(x): when no single predicate follows every x at once, the
// fewest that do (greedily), for response(x, [y1, y2...], 1).
func (m *miner) responseSet(x int, live []int) (cand, bool) {
	var next []uint64
	for g, evs := range m.groups {
		for _, c := range m.pos[g][x] {
			if c == len(evs) {
				return cand{}, false
			}
			next = append(next, evs[c])
		}
	}
	ys, ok := cover(next, live, func(int) bool { return true })
	if !ok || len(ys) < 2 {
		return cand{}, false
	}
	return cand{pat: "response", x: x, y: -1, ys: ys, k: 1, support: m.with(x)}, true
}

// handoff(to): after every transfer to, the next control event is always
// one and the same back, the events between it are tool calls; tools is the
// fewest tool predicates that cover them, k the longest excursion.
func (m *miner) handoff(to int, live []int) (cand, bool) {
	var control uint64
	for _, i := range live {
		if m.preds[i].Role == ControlRole {
			control |= 1 << uint(i)
		}
	}
	backs, k := control, 0
	var between []uint64
	for g, evs := range m.groups {
		for _, c := range m.pos[g][to] {
			e := c + 1
			for e <= len(evs) && evs[e-1]&control == 0 {
				between = append(between, evs[e-1])
				e++
			}
			if e > len(evs) {
				return cand{}, false
			}
			backs &= evs[e-1]
			k = max(k, e-c)
		}
	}
	if backs == 0 || len(between) == 0 || k > m.opts.MaxK {
		return cand{}, false
	}
	tools, ok := cover(between, live, func(i int) bool { return m.preds[i].Role == ToolRole })
	if !ok {
		return cand{}, false
	}
	back := bits.TrailingZeros64(backs)
	return cand{pat: "handoff_returns", x: to, y: back, ys: tools, k: k, support: m.with(to)}, true
}

// cover picks, greedily, predicates (of live, where allowed) until every
// event has one of them; false when some event has none.
func cover(events []uint64, live []int, allowed func(int) bool) ([]int, bool) {
	var picked []int
	left := slices.Clone(events)
	for len(left) > 0 {
		best, bestN := -1, 0
		for _, i := range live {
			if !allowed(i) {
				continue
			}
			n := 0
			for _, b := range left {
				n += int(b >> uint(i) & 1)
			}
			if n > bestN {
				best, bestN = i, n
			}
		}
		if best < 0 {
			return nil, false
		}
		picked = append(picked, best)
		left = slices.DeleteFunc(left, func(b uint64) bool { return b>>uint(best)&1 == 1 })
	}
	slices.Sort(picked)
	return picked, true
}

func (m *miner) params(c cand) map[string]any {
	name := func(i int) any { return m.preds[i].Name }
	list := func(is []int) any {
		if len(is) == 1 {
			return name(is[0])
		}
		out := make([]any, len(is))
		for j, i := range is {
			out[j] = name(i)
		}
		return out
	}
	switch c.pat {
	case "requires", "never", "first":
		return map[string]any{"x": name(c.x)}
	case "before", "never_after":
		return map[string]any{"x": name(c.x), "y": name(c.y)}
	case "max_calls", "max_consecutive":
		return map[string]any{"x": name(c.x), "n": c.k}
	case "response":
		if c.ys != nil {
			return map[string]any{"x": name(c.x), "y": list(c.ys), "k": c.k}
		}
		return map[string]any{"x": name(c.x), "y": name(c.y), "k": c.k}
	case "handoff_returns":
		return map[string]any{"to": name(c.x), "tools": list(c.ys), "back": name(c.y), "k": c.k}
	}
	panic("no parameters for pattern " + c.pat)
}

// holds runs the candidate's expansion over every group with the engine:
// no verdict at all (violations and pending are the only ones reported).
func (m *miner) holds(c cand, names []string) (bool, error) {
	p, err := New(c.pat, m.params(c), names)
	if err != nil {
		return false, err
	}
	e, err := texpr.Parse(p.Expr, names)
	if err != nil {
		return false, fmt.Errorf("%s: expansion %q: %w", p, p.Expr, err)
	}
	policy, err := texpr.ParseEndPolicy(p.OnEnd)
	if err != nil {
		return false, err
	}
	a := texpr.Assertion{Expr: e, Never: p.Kind == Never, Anchored: p.Kind == Initially, OnEnd: policy}
	a.Compile()
	for _, evs := range m.groups {
		mon := texpr.NewMonitorOf(&a)
		for c, b := range evs {
			if len(mon.Step(texpr.Event{Bits: b, Ref: c})) > 0 {
				return false, nil
			}
		}
		if len(mon.Finish()) > 0 {
			return false, nil
		}
	}
	return true, nil
}

// rank orders the patterns from the strongest evidence to the weakest: the
// pruning removes weak ones first, each by stronger ones that stay.
var rank = map[string]int{"never": 0, "first": 1, "max_calls": 2, "handoff_returns": 3, "response": 4,
	"requires": 5, "max_consecutive": 6, "before": 7, "never_after": 8}

// prune leaves out every candidate implied by the others that remain,
// weakest first; each removal is justified by candidates that stay (or are
// themselves implied by ones that stay), so the set keeps its meaning.
func prune(cands []cand) (kept, left []cand) {
	order := slices.Clone(cands)
	slices.SortStableFunc(order, func(a, b cand) int {
		return cmp.Or(cmp.Compare(rank[b.pat], rank[a.pat]), cmp.Compare(b.k, a.k))
	})
	in := map[int]bool{} // index into order of the candidates still in
	for i := range order {
		in[i] = true
	}
	find := func(f func(c cand) bool) bool {
		for i, c := range order {
			if in[i] && f(c) {
				return true
			}
		}
		return false
	}
	for i, c := range order {
		in[i] = false
		in[i] = !implied(c, find)
	}
	for i, c := range order {
		if in[i] {
			kept = append(kept, c)
		} else {
			left = append(left, c)
		}
	}
	byLibrary := func(a, b cand) int {
		return cmp.Or(cmp.Compare(libraryIndex(a.pat), libraryIndex(b.pat)), cmp.Compare(a.x, b.x), cmp.Compare(a.y, b.y))
	}
	slices.SortStableFunc(kept, byLibrary)
	slices.SortStableFunc(left, byLibrary)
	return kept, left
}

func libraryIndex(name string) int {
	return slices.IndexFunc(library, func(d def) bool { return d.name == name })
}

// implied says whether c follows from candidates find can see.
func implied(c cand, find func(func(cand) bool) bool) bool {
	is := func(pat string, x, y int) func(cand) bool {
		return func(o cand) bool { return o.pat == pat && o.x == x && (y < 0 || o.y == y) && o.ys == nil }
	}
	// respWithin: a response from x to y within k, or a hand-off from x back with y within k.
	respWithin := func(x, y, k int) bool {
		return find(func(o cand) bool {
			return o.x == x && o.y == y && o.k <= k && (o.pat == "handoff_returns" || (o.pat == "response" && o.ys == nil))
		})
	}
	switch c.pat {
	case "requires":
		return find(is("first", c.x, -1))
	case "max_consecutive":
		return find(func(o cand) bool { return o.pat == "max_calls" && o.x == c.x && o.k <= c.k })
	case "before":
		if find(is("first", c.x, -1)) {
			return true
		}
		return find(func(o cand) bool {
			return o.pat == "before" && o.x == c.x && o.y != c.y && find(is("before", o.y, c.y))
		})
	case "never_after":
		if find(is("first", c.y, -1)) && find(func(o cand) bool { return o.pat == "max_calls" && o.x == c.y && o.k == 1 }) {
			return true
		}
		// no y after the first z, and the first z comes no later than the first x
		return find(func(o cand) bool {
			return o.pat == "never_after" && o.y == c.y && o.x != c.x && find(is("before", o.x, c.x))
		})
	case "response":
		if c.ys != nil {
			return false
		}
		if find(func(o cand) bool { return o.pat == "handoff_returns" && o.x == c.x && o.y == c.y && o.k <= c.k }) {
			return true
		}
		for k1 := 1; k1 < c.k; k1++ {
			if find(func(o cand) bool {
				return o.x == c.x && o.y != c.y && o.k <= k1 && (o.pat == "handoff_returns" || (o.pat == "response" && o.ys == nil)) &&
					respWithin(o.y, c.y, c.k-k1)
			}) {
				return true
			}
		}
	}
	return false
}
