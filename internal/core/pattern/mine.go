// SPDX-License-Identifier: Apache-2.0

package pattern

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

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
	// Aliases are other names of the same role: an agent or a tool that
	// another framework or version names differently (to_weather_agent,
	// to_weather_agent_v2). The caller has OR-ed their bits into this
	// predicate's, so that the miner sees one role; every event parameter
	// naming it lists them all.
	Aliases []string
	// Narrows, when set, makes this a value predicate: see Narrowing.
	Narrows *Narrowing
}

// Narrowing says that a predicate holds at the calls of another, the tool
// predicate Of (a bit index), whose argument or result Field took one of
// the Values the good runs showed. Of a value predicate Mine proposes only
// that every call of Of is one (never: Of & ~it), nothing else.
type Narrowing struct {
	Of     int
	Field  string   // args.city, result.status
	Values []string // as JSON: "London", 3, true
	// Calls are the calls of Of the good runs made, Once how many of the
	// values were seen at one call only: a new call shows a value not seen
	// with a probability estimated as (Once+1)/(Calls+1) (Good-Turing's
	// estimate of the unseen, never 0; docs/patterns.md).
	Calls, Once int
}

const (
	// MinGroups is the number of good groups below which a caller should
	// warn, and the default MinSupport: an order that holds in one group by
	// chance with probability 1/2 (two events, each once) holds in 5 by
	// chance with probability 1/32, the first below 0.05 (docs/patterns.md).
	MinGroups = 5
	// DefaultMaxChance is the default MaxChance.
	DefaultMaxChance = 0.05
)

// MineOptions bound what Mine proposes.
type MineOptions struct {
	// MaxK is the largest k of response and handoff_returns (default 10).
	MaxK int
	// MinSupport: an assertion exercised in fewer groups is weak (default
	// MinGroups; 1: none is for its support).
	MinSupport int
	// MaxChance: an assertion that holds on the good groups by chance with a
	// higher probability is weak (default DefaultMaxChance; 1: none is for
	// its chance).
	MaxChance float64
	// Against are bad groups, over the same bits: each assertion says which
	// of them it breaks, those that break some come first, and the
	// predicates' frequencies of the chance figure are those of the good and
	// the bad events together.
	Against [][]uint64
}

// Mined is one proposed assertion: a pattern that holds on every group.
type Mined struct {
	Pattern Pattern
	// Params are the pattern's parameters as a config writes them.
	Params map[string]any
	// Never is, for a value proposal (a value predicate's: every call of a
	// tool has its argument or result among the values seen), which is not
	// a pattern of the library, the expression of its never assertion;
	// Pattern is then the zero Pattern.
	Never string
	// Support is the number of groups in which the assertion was exercised:
	// its x happened (every group for requires, first and never; the groups
	// with a y for before; with a call of the tool for a value proposal).
	Support int
	// Events is how many events exercised it: each x (each y for before,
	// each call for a value proposal, every event for never, each group for
	// first).
	Events int
	// Chance is the probability that the assertion holds on every good
	// group by chance (docs/patterns.md: events drawn independently at the
	// predicates' frequencies; for a value proposal, that a new call shows a
	// value not seen); Log10Chance is its logarithm, which does not
	// underflow.
	Chance, Log10Chance float64
	// Weak: exercised in fewer than MinSupport groups, or Chance above
	// MaxChance; Why says which, in words.
	Weak bool
	Why  string
	// Broken are the indices of the Against groups it breaks: a violation,
	// or an obligation left pending at their end.
	Broken  []int
	meaning string
	check   *texpr.Assertion
}

// Meaning is the assertion in plain words.
func (m Mined) Meaning() string {
	if m.Never != "" {
		return m.meaning
	}
	return m.Pattern.Meaning()
}

func (m Mined) String() string {
	if m.Never != "" {
		return "never: " + m.Never
	}
	return m.Pattern.String()
}

// Judge runs the assertion over a group (bits as Mine was given them):
// whether it is violated, and whether an obligation is left pending at the
// group's end (which the good groups never did).
func (m Mined) Judge(group []uint64) (violated, pending bool) {
	mon := texpr.NewMonitorOf(m.check)
	for c, b := range group {
		if len(mon.Step(texpr.Event{Bits: b, Ref: c})) > 0 {
			violated = true
		}
	}
	for _, v := range mon.Finish() {
		if v.Violation {
			violated = true
		} else {
			pending = true
		}
	}
	return violated, pending
}

// Breaks: the assertion is violated on the group, or left pending.
func (m Mined) Breaks(group []uint64) bool {
	v, p := m.Judge(group)
	return v || p
}

// MineResult is what Mine found.
type MineResult struct {
	// Mined are the proposals, strong ones first, weak ones after; in each,
	// those that break bad groups first (more first), then by Chance.
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
	events  int
	log10   float64 // of the chance
	weak    bool
	why     string
}

// Mine proposes the assertions of the library that hold on every group
// (each a sequence of predicate bits, bit i for preds[i]): no violation and
// nothing pending, as the engine judges their expansions. Parameters are
// the tightest the groups allow. Each gets its support, its events and the
// chance that it holds by chance; those with too little of either are weak.
// Assertions implied by others proposed are left out, a strong one only by
// strong ones (see docs/patterns.md for the rules).
func Mine(preds []MinePredicate, groups [][]uint64, opts MineOptions) (MineResult, error) {
	if opts.MaxK <= 0 {
		opts.MaxK = 10
	}
	if opts.MinSupport <= 0 {
		opts.MinSupport = MinGroups
	}
	if opts.MaxChance <= 0 {
		opts.MaxChance = DefaultMaxChance
	}
	if len(preds) > texpr.MaxPredicates {
		return MineResult{}, fmt.Errorf("%d predicates, at most %d", len(preds), texpr.MaxPredicates)
	}
	for i, p := range preds {
		if p.Narrows != nil && (p.Narrows.Of < 0 || p.Narrows.Of >= len(preds) || p.Narrows.Of == i || preds[p.Narrows.Of].Narrows != nil) {
			return MineResult{}, fmt.Errorf("predicate %s narrows %d: not another predicate that narrows none", p.Name, p.Narrows.Of)
		}
	}
	m := miner{preds: preds, groups: groups, opts: opts}
	m.index()
	m.distribution()
	cands := m.candidates()
	var res MineResult
	var held []cand
	for _, c := range cands {
		a, err := m.assertion(c)
		if err != nil {
			return MineResult{}, err
		}
		if !holdsOn(a, groups) {
			res.Refuted++
			continue
		}
		m.score(&c)
		held = append(held, c)
	}
	res.Candidates = len(held)
	kept, left := prune(held)
	res.Implied = len(left)
	var err error
	if res.Mined, err = m.mined(kept); err != nil {
		return MineResult{}, err
	}
	if res.Left, err = m.mined(left); err != nil {
		return MineResult{}, err
	}
	for i := range res.Mined {
		for b, g := range opts.Against {
			if res.Mined[i].Breaks(g) {
				res.Mined[i].Broken = append(res.Mined[i].Broken, b)
			}
		}
	}
	slices.SortStableFunc(res.Mined, func(a, b Mined) int {
		return cmp.Or(cmp.Compare(b2i(a.Weak), b2i(b.Weak)), cmp.Compare(len(b.Broken), len(a.Broken)),
			cmp.Compare(a.Log10Chance, b.Log10Chance), cmp.Compare(b.Support, a.Support), cmp.Compare(b.Events, a.Events))
	})
	return res, nil
}

func (m *miner) mined(cs []cand) ([]Mined, error) {
	all := m.allNames()
	out := make([]Mined, 0, len(cs))
	for _, c := range cs {
		a, err := m.assertion(c)
		if err != nil {
			return nil, err
		}
		mn := Mined{Support: c.support, Events: c.events, Log10Chance: c.log10, Chance: math.Pow(10, c.log10),
			Weak: c.weak, Why: c.why, check: a}
		if c.pat == narrows {
			mn.Never = m.narrowsExpr(c, m.external)
			mn.meaning = m.narrowsMeaning(c)
		} else {
			mn.Params = m.params(c, m.external)
			if mn.Pattern, err = New(c.pat, mn.Params, all); err != nil {
				return nil, err
			}
		}
		out = append(out, mn)
	}
	return out, nil
}

// narrows is the candidate of a value predicate: every call of x is y.
const narrows = "narrows"

type miner struct {
	preds  []MinePredicate
	groups [][]uint64
	opts   MineOptions
	pos    [][][]int // pos[g][i]: the cycles (1-based) where predicate i holds in group g
	// the events of the good and bad groups: each distinct bit vector and
	// its frequency, by bits
	dist  []uint64
	distP []float64
	lens  map[int]int // group length: how many good groups have it
}

// internal names a predicate by its own name; external lists its aliases
// too, as the config writes it.
func (m *miner) internal(i int) []string { return []string{m.preds[i].Name} }

func (m *miner) external(i int) []string {
	return append([]string{m.preds[i].Name}, m.preds[i].Aliases...)
}

// names are the predicates' own names, bit by bit; allNames their aliases
// too.
func (m *miner) names() []string {
	out := make([]string, len(m.preds))
	for i, p := range m.preds {
		out[i] = p.Name
	}
	return out
}

func (m *miner) allNames() []string {
	var out []string
	for i := range m.preds {
		out = append(out, m.external(i)...)
	}
	return out
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
	for i, p := range m.preds {
		if p.Narrows != nil {
			if c, ok := m.narrowing(p.Narrows.Of, i); ok {
				out = append(out, c)
			}
			continue
		}
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

// narrowing(t, v): every call of t is a v (the values seen).
func (m *miner) narrowing(t, v int) (cand, bool) {
	for g := range m.groups {
		for _, c := range m.pos[g][t] {
			if !m.at(g, c, v) {
				return cand{}, false
			}
		}
	}
	return cand{pat: narrows, x: t, y: v, support: m.with(t)}, true
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

// params are the candidate's parameters, each predicate named as name
// names it (internal or external).
func (m *miner) params(c cand, name func(int) []string) map[string]any {
	list := func(is []int) any {
		var names []string
		for _, i := range is {
			names = append(names, name(i)...)
		}
		if len(names) == 1 {
			return names[0]
		}
		out := make([]any, len(names))
		for j, n := range names {
			out[j] = n
		}
		return out
	}
	one := func(i int) any { return list([]int{i}) }
	switch c.pat {
	case "requires", "never", "first":
		return map[string]any{"x": one(c.x)}
	case "before", "never_after":
		return map[string]any{"x": one(c.x), "y": one(c.y)}
	case "max_calls", "max_consecutive":
		return map[string]any{"x": one(c.x), "n": c.k}
	case "response":
		if c.ys != nil {
			return map[string]any{"x": one(c.x), "y": list(c.ys), "k": c.k}
		}
		return map[string]any{"x": one(c.x), "y": one(c.y), "k": c.k}
	case "handoff_returns":
		return map[string]any{"to": one(c.x), "tools": list(c.ys), "back": one(c.y), "k": c.k}
	}
	panic("no parameters for pattern " + c.pat)
}

// narrowsExpr is a value candidate's never expression: a call of the tool
// that is not one of the values.
func (m *miner) narrowsExpr(c cand, name func(int) []string) string {
	or := func(i int) string {
		ns := name(i)
		if len(ns) == 1 {
			return ns[0]
		}
		return "(" + strings.Join(ns, " | ") + ")"
	}
	return or(c.x) + " & ~" + or(c.y)
}

func (m *miner) narrowsMeaning(c cand) string {
	n := m.preds[c.y].Narrows
	return fmt.Sprintf("every %s has %s %s (%s)", strings.Join(m.external(c.x), " or "), n.Field, oneOf(n.Values), m.preds[c.y].Name)
}

func oneOf(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return "one of " + strings.Join(values, ", ")
}

// assertion is the candidate's expansion over the predicates' own names,
// compiled: what the engine runs over the groups' bits.
func (m *miner) assertion(c cand) (*texpr.Assertion, error) {
	names := m.names()
	var exp Expansion
	if c.pat == narrows {
		exp = Expansion{Kind: Never, Expr: m.narrowsExpr(c, m.internal), OnEnd: "ignore"}
	} else {
		p, err := New(c.pat, m.params(c, m.internal), names)
		if err != nil {
			return nil, err
		}
		exp = p.Expansion
	}
	e, err := texpr.Parse(exp.Expr, names)
	if err != nil {
		return nil, fmt.Errorf("%s: expansion %q: %w", c.pat, exp.Expr, err)
	}
	policy, err := texpr.ParseEndPolicy(exp.OnEnd)
	if err != nil {
		return nil, err
	}
	a := &texpr.Assertion{Expr: e, Never: exp.Kind == Never, Anchored: exp.Kind == Initially, OnEnd: policy}
	a.Compile()
	return a, nil
}

// holdsOn runs an assertion over every group with the engine: no verdict
// at all (violations and pending are the only ones reported).
func holdsOn(a *texpr.Assertion, groups [][]uint64) bool {
	for _, evs := range groups {
		mon := texpr.NewMonitorOf(a)
		for c, b := range evs {
			if len(mon.Step(texpr.Event{Bits: b, Ref: c})) > 0 {
				return false
			}
		}
		if len(mon.Finish()) > 0 {
			return false
		}
	}
	return true
}

// rank orders the patterns from the strongest evidence to the weakest: the
// pruning removes weak ones first, each by stronger ones that stay.
var rank = map[string]int{narrows: 0, "never": 0, "first": 1, "max_calls": 2, "handoff_returns": 3, "response": 4,
	"requires": 5, "max_consecutive": 6, "before": 7, "never_after": 8}

// prune leaves out every candidate implied by the others that remain,
// weak ones first, then weakest pattern first; each removal is justified by
// candidates that stay (or are themselves implied by ones that stay), so
// the set keeps its meaning, and a strong candidate is left out only for
// strong ones: a weak one, written commented out, implies nothing.
func prune(cands []cand) (kept, left []cand) {
	order := slices.Clone(cands)
	slices.SortStableFunc(order, func(a, b cand) int {
		return cmp.Or(cmp.Compare(b2i(b.weak), b2i(a.weak)), cmp.Compare(rank[b.pat], rank[a.pat]), cmp.Compare(b.k, a.k))
	})
	in := map[int]bool{} // index into order of the candidates still in
	for i := range order {
		in[i] = true
	}
	for i, c := range order {
		in[i] = false
		find := func(f func(c cand) bool) bool {
			for j, o := range order {
				if in[j] && (c.weak || !o.weak) && f(o) {
					return true
				}
			}
			return false
		}
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
	if name == narrows {
		return len(library)
	}
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
