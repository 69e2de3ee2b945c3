// SPDX-License-Identifier: Apache-2.0

package texpr

import "math/bits"

// The fast evaluator. An evaluation of a node, started at some cycle, is an
// instance of one of the types below; the machine steps it once per event.
// All matches an evaluation reports during a step end at that step's cycle, so
// a step returns only how many matches it produced (a weight: identical
// threads are merged into one thread that counts for several) and whether the
// evaluation is still alive afterwards. The cycle it returns false is its
// termination cycle. Trees are not built here: tree.go replays a verdict's
// events when its explanation is wanted.

// evaluation is one live evaluation of a node.
type evaluation interface {
	// step consumes the event of the next cycle.
	step(m *machine, ev uint64) (matches uint64, alive bool)
	// free returns the evaluation and every live sub-evaluation to the pools.
	free(m *machine)
}

// node is a compiled expression node.
type node struct {
	op       Op
	index    int // OpPred: bit index, -1 for ok
	l, r     *node
	min, max int
	leaf     predEval // OpPred: the shared, stateless evaluation
}

func compile(e *Expr) *node {
	n := &node{op: e.Op, index: e.Index, min: e.Min, max: e.Max}
	if e.L != nil {
		n.l = compile(e.L)
	}
	if e.R != nil {
		n.r = compile(e.R)
	}
	n.leaf = predEval{index: e.Index}
	return n
}

// machine owns the pools of evaluations and counts the live ones, so that the
// monitor can enforce its thread cap. The pools are made when an evaluation
// first outlives its start event: most monitors of an open group never have
// one (their trigger has not held), and a processor keeps a monitor per
// assertion per open group.
type machine struct {
	*pools
	live int
}

type pools struct {
	seqs    pool[seqEval]
	pairs   pool[pairEval]
	repeats pool[repeatEval]
	nots    pool[notEval]
	funcs   pool[funcEval]
}

// decidedAtStart tells whether an evaluation of n begun at an event ends
// there without being built: "p >> x" and "p ; x" where p does not hold,
// with the vacuous match of the first. Most assertions are "trigger >>
// response" with a trigger that rarely holds: those end at once, without
// touching a pool or a monitor's running part.
func decidedAtStart(n *node, ev uint64) (matches uint64, decided bool) {
	if (n.op == OpCond || n.op == OpConcat) && n.l.op == OpPred && !n.l.leaf.holds(ev) {
		if n.op == OpCond {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// start begins an evaluation of n whose first step is the next event.
func (m *machine) start(n *node) evaluation {
	if m.pools == nil && n.op != OpPred {
		m.pools = &pools{}
	}
	switch n.op {
	case OpPred:
		return &n.leaf
	case OpConcat, OpFusion, OpCond:
		e := m.seqs.get()
		e.n, e.a, e.aMatched = n, m.start(n.l), false
		m.live++
		return e
	case OpAlt, OpAnd, OpIsect:
		e := m.pairs.get()
		*e = pairEval{n: n, a: m.start(n.l), b: m.start(n.r)}
		m.live++
		return e
	case OpRepeat:
		e := m.repeats.get()
		e.n, e.first = n, true
		if n.max > 0 {
			e.threads = append(e.threads, iteration{eval: m.start(n.l), depth: 1, weight: 1})
		}
		m.live++
		return e
	case OpNot:
		e := m.nots.get()
		*e = notEval{a: m.start(n.l)}
		m.live++
		return e
	case OpFirst, OpOnce:
		e := m.funcs.get()
		*e = funcEval{first: n.op == OpFirst, a: m.start(n.l)}
		m.live++
		return e
	}
	panic("texpr: unknown operator")
}

// begin starts an evaluation of n at this event and takes its first step,
// where decidedAtStart did not decide it. The evaluation is kept only if it
// outlives the event.
func (m *machine) begin(n *node, ev uint64) (eval evaluation, matches uint64, alive bool) {
	eval = m.start(n)
	matches, alive = eval.step(m, ev)
	if !alive {
		eval.free(m)
		return nil, matches, false
	}
	return eval, matches, true
}

// pool is a free list: evaluations are reused, so steady-state stepping
// allocates nothing.
type pool[T any] struct{ free []*T }

func (p *pool[T]) get() *T {
	if n := len(p.free); n > 0 {
		x := p.free[n-1]
		p.free = p.free[:n-1]
		return x
	}
	return new(T)
}

func (p *pool[T]) put(x *T) { p.free = append(p.free, x) }

// predEval evaluates a predicate at its start cycle. It holds no state, so one
// instance per node serves every evaluation.
type predEval struct{ index int }

func (p *predEval) holds(ev uint64) bool { return p.index < 0 || ev&(1<<uint(p.index)) != 0 }

func (p *predEval) step(_ *machine, ev uint64) (uint64, bool) {
	if p.holds(ev) {
		return 1, false
	}
	return 0, false
}

func (p *predEval) free(*machine) {}

// seqEval evaluates a + b, a / b and a >> b.
type seqEval struct {
	n        *node
	a        evaluation // nil once a has terminated
	aMatched bool
	bs       []thread // live b evaluations
}

// thread is a b evaluation and the number of a matches it continues.
type thread struct {
	eval   evaluation
	weight uint64
}

func (s *seqEval) step(m *machine, ev uint64) (uint64, bool) {
	var out uint64
	live := s.bs[:0]
	for _, t := range s.bs {
		k, alive := t.eval.step(m, ev)
		out = addSat(out, mulSat(k, t.weight))
		if alive {
			live = append(live, t)
		} else {
			t.eval.free(m)
		}
	}
	s.bs = live
	if s.a != nil {
		k, alive := s.a.step(m, ev)
		if k > 0 {
			s.aMatched = true
			out = addSat(out, s.continueWith(m, ev, k))
		}
		if !alive {
			s.a.free(m)
			s.a = nil
			if !s.aMatched && s.n.op == OpCond {
				out = addSat(out, 1) // the vacuous match of >>
			}
		}
	}
	return out, s.a != nil || len(s.bs) > 0
}

// continueWith starts b for k matches of a that end at this cycle: fused, b
// takes this very event; otherwise it waits for the next one.
func (s *seqEval) continueWith(m *machine, ev uint64, k uint64) uint64 {
	b := m.start(s.n.r)
	if s.n.op != OpFusion {
		s.bs = append(s.bs, thread{b, k})
		return 0
	}
	kb, alive := b.step(m, ev)
	if alive {
		s.bs = append(s.bs, thread{b, k})
	} else {
		b.free(m)
	}
	return mulSat(kb, k)
}

func (s *seqEval) free(m *machine) {
	if s.a != nil {
		s.a.free(m)
	}
	for _, t := range s.bs {
		t.eval.free(m)
	}
	clear(s.bs)
	*s = seqEval{bs: s.bs[:0]}
	m.seqs.put(s)
	m.live--
}

// pairEval evaluates a | b, a & b and a ^ b: both sides start together and
// run to their own termination.
type pairEval struct {
	n      *node
	a, b   evaluation // nil once terminated
	na, nb uint64     // ^: matches of each side so far
}

func (p *pairEval) step(m *machine, ev uint64) (uint64, bool) {
	ka := stepSide(m, &p.a, ev)
	kb := stepSide(m, &p.b, ev)
	var out uint64
	switch p.n.op {
	case OpAlt:
		out = addSat(ka, kb)
	case OpAnd:
		if ka > 0 && kb > 0 {
			out = 1
		}
	case OpIsect:
		// every new a match pairs with every b match so far (this cycle's
		// included), every new b match with the earlier a matches.
		out = addSat(mulSat(ka, addSat(p.nb, kb)), mulSat(kb, p.na))
		p.na, p.nb = addSat(p.na, ka), addSat(p.nb, kb)
	}
	return out, p.a != nil || p.b != nil
}

// stepSide steps a side that is still alive and clears it when it terminates.
func stepSide(m *machine, side *evaluation, ev uint64) uint64 {
	if *side == nil {
		return 0
	}
	k, alive := (*side).step(m, ev)
	if !alive {
		(*side).free(m)
		*side = nil
	}
	return k
}

func (p *pairEval) free(m *machine) {
	if p.a != nil {
		p.a.free(m)
	}
	if p.b != nil {
		p.b.free(m)
	}
	*p = pairEval{}
	m.pairs.put(p)
	m.live--
}

// repeatEval evaluates a * (n,m): one thread per live iteration.
type repeatEval struct {
	n       *node
	first   bool // the first step, when an empty match (n = 0) is due
	threads []iteration
	spawned []iteration
}

// iteration is an evaluation of the depth-th iteration, continuing weight
// paths of depth-1 iterations.
type iteration struct {
	eval   evaluation
	depth  int
	weight uint64
}

func (r *repeatEval) step(m *machine, ev uint64) (uint64, bool) {
	var out uint64
	if r.first {
		r.first = false
		if r.n.min == 0 {
			out = 1
		}
	}
	live := r.threads[:0]
	for _, it := range r.threads {
		k, alive := it.eval.step(m, ev)
		if k > 0 {
			w := mulSat(k, it.weight)
			if it.depth >= r.n.min {
				out = addSat(out, w)
			}
			if it.depth < r.n.max {
				r.spawn(m, it.depth+1, w)
			}
		}
		if alive {
			live = append(live, it)
		} else {
			it.eval.free(m)
		}
	}
	r.threads = append(live, r.spawned...)
	clear(r.spawned)
	r.spawned = r.spawned[:0]
	return out, len(r.threads) > 0
}

// spawn starts the next iteration at the next cycle, merged with a thread of
// the same depth spawned this cycle: the two are identical.
func (r *repeatEval) spawn(m *machine, depth int, w uint64) {
	for i := range r.spawned {
		if r.spawned[i].depth == depth {
			r.spawned[i].weight = addSat(r.spawned[i].weight, w)
			return
		}
	}
	r.spawned = append(r.spawned, iteration{eval: m.start(r.n.l), depth: depth, weight: w})
}

func (r *repeatEval) free(m *machine) {
	for _, it := range r.threads {
		it.eval.free(m)
	}
	clear(r.threads)
	*r = repeatEval{threads: r.threads[:0], spawned: r.spawned[:0]}
	m.repeats.put(r)
	m.live--
}

// notEval evaluates ~a.
type notEval struct {
	a       evaluation
	matched bool
}

func (e *notEval) step(m *machine, ev uint64) (uint64, bool) {
	k, alive := e.a.step(m, ev)
	if k > 0 {
		e.matched = true
	}
	if alive {
		return 0, true
	}
	if e.matched {
		return 0, false
	}
	return 1, false
}

func (e *notEval) free(m *machine) {
	e.a.free(m)
	*e = notEval{}
	m.nots.put(e)
	m.live--
}

// funcEval evaluates first(a) and once(a): at most one match a cycle, and
// for first only the first, which ends the evaluation (a is freed with it).
type funcEval struct {
	a     evaluation
	first bool
}

func (f *funcEval) step(m *machine, ev uint64) (uint64, bool) {
	k, alive := f.a.step(m, ev)
	if k == 0 {
		return 0, alive
	}
	return 1, alive && !f.first
}

func (f *funcEval) free(m *machine) {
	f.a.free(m)
	*f = funcEval{}
	m.funcs.put(f)
	m.live--
}

// addSat and mulSat saturate: a weight counts paths, which ^ and nested
// repeats can multiply past 2^64.
func addSat(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return ^uint64(0)
	}
	return s
}

func mulSat(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return ^uint64(0)
	}
	return lo
}
