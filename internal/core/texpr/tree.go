// SPDX-License-Identifier: Apache-2.0

package texpr

import "errors"

// The tree evaluator: the same semantics as eval.go, written for clarity
// rather than speed. Every match carries its record and every sub-evaluation
// can describe its termination. The monitor replays a verdict's events
// through it when the verdict's explanation is wanted, so the fast path never
// builds a tree.

// errTreeBudget stops a replay whose tree would exceed the thread cap.
var errTreeBudget = errors.New("trace tree too large")

type treeEval interface {
	// step consumes the event of the next cycle c.
	step(c int, ev *Event) (matches []*Record, alive bool)
	// record describes the evaluation as terminated at end: a leaf counting
	// its matches if it matched, else the records of why it failed. For a
	// live evaluation (end of input) end is the last cycle.
	record(end int) *Record
}

// replay runs sub-evaluations for one top-level start and counts what it
// creates against a budget, which the replays of a monitor's live roots
// share in capture mode (left), and which one explanation has to itself
// otherwise.
type replay struct {
	left     *int   // evaluations the budget still allows
	spent    int    // evaluations this replay created
	captures uint64 // the capture predicates' bits (Assertion.Captures)
}

func newReplay(budget int, captures uint64) *replay {
	return &replay{left: &budget, captures: captures}
}

func (r *replay) spend() {
	*r.left--
	r.spent++
	if *r.left < 0 {
		panic(errTreeBudget)
	}
}

// start begins an evaluation of e at cycle s with the input dict d.
func (r *replay) start(e *Expr, s int, d Dict) treeEval {
	r.spend()
	switch e.Op {
	case OpPred:
		return &treePred{r: r, e: e, s: s, d: d}
	case OpConcat, OpFusion, OpCond:
		return &treeSeq{r: r, e: e, s: s, d: d, a: r.start(e.L, s, d)}
	case OpAlt, OpAnd, OpIsect:
		return &treePair{e: e, s: s, d: d, a: r.start(e.L, s, d), b: r.start(e.R, s, d)}
	case OpRepeat:
		t := &treeRepeat{r: r, e: e, s: s, d: d, first: true}
		if e.Max > 0 {
			t.threads = []*treeIteration{{eval: r.start(e.L, s, d), start: s, depth: 1}}
		}
		return t
	case OpNot:
		return &treeNot{e: e, s: s, d: d, a: r.start(e.L, s, d)}
	case OpFirst, OpOnce:
		return &treeFunc{e: e, s: s, d: d, a: r.start(e.L, s, d)}
	}
	panic("texpr: unknown operator")
}

// leafRecord is the termination record of a sub-evaluation that matched.
func leafRecord(e *Expr, s, end, count int, d Dict) *Record {
	return &Record{Label: label(e), Start: s, End: end, Count: count, Dict: d}
}

type treePred struct {
	r       *replay
	e       *Expr
	s       int
	d       Dict
	matched int
}

func (p *treePred) step(c int, ev *Event) ([]*Record, bool) {
	i := p.e.Index
	if i >= 0 && ev.Bits&(1<<uint(i)) == 0 {
		return nil, false
	}
	out := p.d
	if i >= 0 && p.r.captures&(1<<uint(i)) != 0 {
		// A capture predicate without the event's captures cannot be
		// told: the caller gives them wherever Assertion.Captures is set.
		var holds bool
		if ev.Captures != nil {
			holds, out = ev.Captures.Apply(i, p.d)
		}
		if !holds {
			return nil, false
		}
	}
	p.matched = 1
	return []*Record{leafRecord(p.e, c, c, 0, out)}, false
}

func (p *treePred) record(int) *Record { return leafRecord(p.e, p.s, p.s, p.matched, p.d) }

// treeSeq evaluates + / >>.
type treeSeq struct {
	r        *replay
	e        *Expr
	s        int
	d        Dict
	a        treeEval
	aMatches int
	aRecord  *Record // once a terminated
	bs       []*treeThread
	lastDead *Record // termination record of the last b thread to die
	matches  int
}

type treeThread struct {
	eval   treeEval
	start  int
	aMatch *Record
}

func (t *treeSeq) step(c int, ev *Event) ([]*Record, bool) {
	var out []*Record
	live := t.bs[:0]
	for _, th := range t.bs {
		ms, alive := th.eval.step(c, ev)
		out = t.emit(out, c, th.aMatch, ms)
		if alive {
			live = append(live, th)
		} else {
			t.lastDead = th.eval.record(c)
		}
	}
	t.bs = live
	if t.aRecord == nil {
		out = t.stepA(c, ev, out)
	}
	return out, t.aRecord == nil || len(t.bs) > 0
}

func (t *treeSeq) stepA(c int, ev *Event, out []*Record) []*Record {
	ms, alive := t.a.step(c, ev)
	t.aMatches += len(ms)
	for _, am := range ms {
		if t.e.Op != OpFusion {
			t.bs = append(t.bs, &treeThread{eval: t.r.start(t.e.R, c+1, am.Dict), start: c + 1, aMatch: am})
			continue
		}
		th := &treeThread{eval: t.r.start(t.e.R, c, am.Dict), start: c, aMatch: am}
		bms, bAlive := th.eval.step(c, ev)
		out = t.emit(out, c, am, bms)
		if bAlive {
			t.bs = append(t.bs, th)
		} else {
			t.lastDead = th.eval.record(c)
		}
	}
	if !alive {
		t.aRecord = t.a.record(c)
		if t.aMatches == 0 && t.e.Op == OpCond {
			out = append(out, &Record{Label: label(t.e), Start: t.s, End: c, Count: t.matches, Dict: t.d, Children: []*Record{t.aRecord}})
			t.matches++
		}
	}
	return out
}

func (t *treeSeq) emit(out []*Record, c int, am *Record, bms []*Record) []*Record {
	for _, bm := range bms {
		out = append(out, &Record{Label: label(t.e), Start: t.s, End: c, Count: t.matches, Dict: bm.Dict, Children: []*Record{am, bm}})
		t.matches++
	}
	return out
}

func (t *treeSeq) record(end int) *Record {
	if t.matches > 0 {
		return leafRecord(t.e, t.s, end, t.matches, t.d)
	}
	a := t.aRecord
	if a == nil {
		a = t.a.record(end)
	}
	rec := &Record{Label: label(t.e), Start: t.s, End: end, Dict: t.d, Children: []*Record{a}}
	if t.aMatches == 0 {
		return rec
	}
	// The last b thread to have seen an event: at the end of input, one
	// waiting for the next cycle has nothing to show.
	b := t.lastDead
	for i := len(t.bs) - 1; i >= 0; i-- {
		if t.bs[i].start <= end {
			b = t.bs[i].eval.record(end)
			break
		}
	}
	if b != nil {
		rec.Children = append(rec.Children, b)
	}
	return rec
}

// treePair evaluates | & ^.
type treePair struct {
	e            *Expr
	s            int
	d            Dict
	a, b         treeEval
	aRec, bRec   *Record // once terminated
	aSeen, bSeen []*Record
	matches      int
}

func (p *treePair) step(c int, ev *Event) ([]*Record, bool) {
	ma := stepTreeSide(p.a, &p.aRec, c, ev)
	mb := stepTreeSide(p.b, &p.bRec, c, ev)
	var out []*Record
	switch p.e.Op {
	case OpAlt:
		for _, m := range append(ma, mb...) {
			out = p.emit(out, c, m.Dict, m)
		}
	case OpAnd:
		if len(ma) > 0 && len(mb) > 0 {
			x, y, d := leastPair(ma, mb)
			out = p.emit(out, c, d, x, y)
		}
	case OpIsect:
		p.bSeen = append(p.bSeen, mb...)
		for _, x := range ma {
			for _, y := range p.bSeen {
				out = p.emit(out, c, x.Dict.Merge(y.Dict), x, y)
			}
		}
		for _, y := range mb {
			for _, x := range p.aSeen {
				out = p.emit(out, c, x.Dict.Merge(y.Dict), x, y)
			}
		}
		p.aSeen = append(p.aSeen, ma...)
	}
	return out, p.aRec == nil || p.bRec == nil
}

// leastPair is the pair of matches & keeps: the one whose merged dict is
// least, the first such produced (see Dict.Compare).
func leastPair(ma, mb []*Record) (x, y *Record, d Dict) {
	x, y, d = ma[0], mb[0], ma[0].Dict.Merge(mb[0].Dict)
	for _, a := range ma {
		for _, b := range mb {
			if m := a.Dict.Merge(b.Dict); m.Compare(d) < 0 {
				x, y, d = a, b, m
			}
		}
	}
	return x, y, d
}

// least is the match first and once keep (see Dict.Compare).
func least(ms []*Record) *Record {
	best := ms[0]
	for _, m := range ms[1:] {
		if m.Dict.Compare(best.Dict) < 0 {
			best = m
		}
	}
	return best
}

func stepTreeSide(side treeEval, rec **Record, c int, ev *Event) []*Record {
	if *rec != nil {
		return nil
	}
	ms, alive := side.step(c, ev)
	if !alive {
		*rec = side.record(c)
	}
	return ms
}

func (p *treePair) emit(out []*Record, c int, d Dict, children ...*Record) []*Record {
	out = append(out, &Record{Label: label(p.e), Start: p.s, End: c, Count: p.matches, Dict: d, Children: children})
	p.matches++
	return out
}

func (p *treePair) record(end int) *Record {
	if p.matches > 0 {
		return leafRecord(p.e, p.s, end, p.matches, p.d)
	}
	a, b := p.aRec, p.bRec
	if a == nil {
		a = p.a.record(end)
	}
	if b == nil {
		b = p.b.record(end)
	}
	return &Record{Label: label(p.e), Start: p.s, End: end, Dict: p.d, Children: []*Record{a, b}}
}

// treeRepeat evaluates a * (n,m), one thread per path of iterations.
type treeRepeat struct {
	r        *replay
	e        *Expr
	s        int
	d        Dict
	first    bool
	threads  []*treeIteration
	lastDead []*Record // the failing path: its matched iterations, then the failing one
	matches  int
}

type treeIteration struct {
	eval  treeEval
	start int
	depth int
	prior []*Record // the matches of the iterations before this one
}

func (t *treeRepeat) step(c int, ev *Event) ([]*Record, bool) {
	var out []*Record
	if t.first {
		t.first = false
		if t.e.Min == 0 {
			out = t.emit(out, c, t.d, nil)
		}
	}
	var next []*treeIteration
	for _, it := range t.threads {
		ms, alive := it.eval.step(c, ev)
		for _, m := range ms {
			path := append(append([]*Record(nil), it.prior...), m)
			if it.depth >= t.e.Min {
				out = t.emit(out, c, m.Dict, path)
			}
			if it.depth < t.e.Max {
				// Every iteration starts from the repeat's input dict.
				next = append(next, &treeIteration{eval: t.r.start(t.e.L, c+1, t.d), start: c + 1, depth: it.depth + 1, prior: path})
			}
		}
		if alive {
			next = append(next, it)
		} else {
			t.lastDead = append(append([]*Record(nil), it.prior...), it.eval.record(c))
		}
	}
	t.threads = next
	return out, len(t.threads) > 0
}

func (t *treeRepeat) emit(out []*Record, c int, d Dict, path []*Record) []*Record {
	out = append(out, &Record{Label: label(t.e), Start: t.s, End: c, Count: t.matches, Dict: d, Children: path})
	t.matches++
	return out
}

func (t *treeRepeat) record(end int) *Record {
	if t.matches > 0 {
		return leafRecord(t.e, t.s, end, t.matches, t.d)
	}
	path := t.lastDead
	for i := len(t.threads) - 1; i >= 0; i-- {
		if it := t.threads[i]; it.start <= end {
			path = append(append([]*Record(nil), it.prior...), it.eval.record(end))
			break
		}
	}
	return &Record{Label: label(t.e), Start: t.s, End: end, Dict: t.d, Children: path}
}

// treeNot evaluates ~a.
type treeNot struct {
	e         *Expr
	s         int
	d         Dict
	a         treeEval
	lastMatch *Record
	matched   bool // ~a matched: a had none
}

func (n *treeNot) step(c int, ev *Event) ([]*Record, bool) {
	ms, alive := n.a.step(c, ev)
	if len(ms) > 0 {
		n.lastMatch = ms[len(ms)-1]
	}
	if alive {
		return nil, true
	}
	if n.lastMatch != nil {
		return nil, false
	}
	n.matched = true
	return []*Record{{Label: label(n.e), Start: n.s, End: c, Dict: n.d, Children: []*Record{n.a.record(c)}}}, false
}

func (n *treeNot) record(end int) *Record {
	if n.matched {
		return leafRecord(n.e, n.s, end, 1, n.d)
	}
	child := n.lastMatch
	if child == nil {
		child = n.a.record(end)
	}
	return &Record{Label: label(n.e), Start: n.s, End: end, Dict: n.d, Children: []*Record{child}}
}

// treeFunc evaluates first(a) and once(a). A match's child is the match of a
// it passes (of a's matches at that cycle, the one whose dict is least); its
// failure record, a's.
type treeFunc struct {
	e       *Expr
	s       int
	d       Dict
	a       treeEval
	aRec    *Record // once a terminated
	matches int
}

func (f *treeFunc) step(c int, ev *Event) ([]*Record, bool) {
	ms, alive := f.a.step(c, ev)
	if !alive {
		f.aRec = f.a.record(c)
	}
	if len(ms) == 0 {
		return nil, alive
	}
	m := least(ms)
	out := []*Record{{Label: label(f.e), Start: f.s, End: c, Count: f.matches, Dict: m.Dict, Children: []*Record{m}}}
	f.matches++
	return out, alive && f.e.Op == OpOnce
}

func (f *treeFunc) record(end int) *Record {
	if f.matches > 0 {
		return leafRecord(f.e, f.s, end, f.matches, f.d)
	}
	a := f.aRec
	if a == nil {
		a = f.a.record(end)
	}
	return &Record{Label: label(f.e), Start: f.s, End: end, Dict: f.d, Children: []*Record{a}}
}
