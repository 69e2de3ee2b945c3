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
	step(c int, ev uint64) (matches []*Record, alive bool)
	// record describes the evaluation as terminated at end: a leaf counting
	// its matches if it matched, else the records of why it failed. For a
	// live evaluation (end of input) end is the last cycle.
	record(end int) *Record
}

// replay runs sub-evaluations for one top-level start and counts what it
// creates against a budget.
type replay struct {
	budget int
}

func (r *replay) spend() {
	r.budget--
	if r.budget < 0 {
		panic(errTreeBudget)
	}
}

func (r *replay) start(e *Expr, s int) treeEval {
	r.spend()
	switch e.Op {
	case OpPred:
		return &treePred{e: e, s: s}
	case OpConcat, OpFusion, OpCond:
		return &treeSeq{r: r, e: e, s: s, a: r.start(e.L, s)}
	case OpAlt, OpAnd, OpIsect:
		return &treePair{e: e, s: s, a: r.start(e.L, s), b: r.start(e.R, s)}
	case OpRepeat:
		t := &treeRepeat{r: r, e: e, s: s, first: true}
		if e.Max > 0 {
			t.threads = []*treeIteration{{eval: r.start(e.L, s), start: s, depth: 1}}
		}
		return t
	case OpNot:
		return &treeNot{e: e, s: s, a: r.start(e.L, s)}
	}
	panic("texpr: unknown operator")
}

// leafRecord is the termination record of a sub-evaluation that matched.
func leafRecord(e *Expr, s, end, count int) *Record {
	return &Record{Label: label(e), Start: s, End: end, Count: count}
}

type treePred struct {
	e       *Expr
	s       int
	matched int
}

func (p *treePred) step(c int, ev uint64) ([]*Record, bool) {
	if p.e.Index < 0 || ev&(1<<uint(p.e.Index)) != 0 {
		p.matched = 1
		return []*Record{leafRecord(p.e, c, c, 0)}, false
	}
	return nil, false
}

func (p *treePred) record(int) *Record { return leafRecord(p.e, p.s, p.s, p.matched) }

// treeSeq evaluates + / >>.
type treeSeq struct {
	r        *replay
	e        *Expr
	s        int
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

func (t *treeSeq) step(c int, ev uint64) ([]*Record, bool) {
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

func (t *treeSeq) stepA(c int, ev uint64, out []*Record) []*Record {
	ms, alive := t.a.step(c, ev)
	t.aMatches += len(ms)
	for _, am := range ms {
		if t.e.Op != OpFusion {
			t.bs = append(t.bs, &treeThread{eval: t.r.start(t.e.R, c+1), start: c + 1, aMatch: am})
			continue
		}
		th := &treeThread{eval: t.r.start(t.e.R, c), start: c, aMatch: am}
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
			out = append(out, &Record{Label: label(t.e), Start: t.s, End: c, Count: t.matches, Children: []*Record{t.aRecord}})
			t.matches++
		}
	}
	return out
}

func (t *treeSeq) emit(out []*Record, c int, am *Record, bms []*Record) []*Record {
	for _, bm := range bms {
		out = append(out, &Record{Label: label(t.e), Start: t.s, End: c, Count: t.matches, Children: []*Record{am, bm}})
		t.matches++
	}
	return out
}

func (t *treeSeq) record(end int) *Record {
	if t.matches > 0 {
		return leafRecord(t.e, t.s, end, t.matches)
	}
	a := t.aRecord
	if a == nil {
		a = t.a.record(end)
	}
	rec := &Record{Label: label(t.e), Start: t.s, End: end, Children: []*Record{a}}
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
	a, b         treeEval
	aRec, bRec   *Record // once terminated
	aSeen, bSeen []*Record
	matches      int
}

func (p *treePair) step(c int, ev uint64) ([]*Record, bool) {
	ma := stepTreeSide(p.a, &p.aRec, c, ev)
	mb := stepTreeSide(p.b, &p.bRec, c, ev)
	var out []*Record
	switch p.e.Op {
	case OpAlt:
		for _, m := range append(ma, mb...) {
			out = p.emit(out, c, m)
		}
	case OpAnd:
		if len(ma) > 0 && len(mb) > 0 {
			out = p.emit(out, c, ma[0], mb[0])
		}
	case OpIsect:
		p.bSeen = append(p.bSeen, mb...)
		for _, x := range ma {
			for _, y := range p.bSeen {
				out = p.emit(out, c, x, y)
			}
		}
		for _, y := range mb {
			for _, x := range p.aSeen {
				out = p.emit(out, c, x, y)
			}
		}
		p.aSeen = append(p.aSeen, ma...)
	}
	return out, p.aRec == nil || p.bRec == nil
}

func stepTreeSide(side treeEval, rec **Record, c int, ev uint64) []*Record {
	if *rec != nil {
		return nil
	}
	ms, alive := side.step(c, ev)
	if !alive {
		*rec = side.record(c)
	}
	return ms
}

func (p *treePair) emit(out []*Record, c int, children ...*Record) []*Record {
	out = append(out, &Record{Label: label(p.e), Start: p.s, End: c, Count: p.matches, Children: children})
	p.matches++
	return out
}

func (p *treePair) record(end int) *Record {
	if p.matches > 0 {
		return leafRecord(p.e, p.s, end, p.matches)
	}
	a, b := p.aRec, p.bRec
	if a == nil {
		a = p.a.record(end)
	}
	if b == nil {
		b = p.b.record(end)
	}
	return &Record{Label: label(p.e), Start: p.s, End: end, Children: []*Record{a, b}}
}

// treeRepeat evaluates a * (n,m), one thread per path of iterations.
type treeRepeat struct {
	r        *replay
	e        *Expr
	s        int
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

func (t *treeRepeat) step(c int, ev uint64) ([]*Record, bool) {
	var out []*Record
	if t.first {
		t.first = false
		if t.e.Min == 0 {
			out = t.emit(out, c, nil)
		}
	}
	var next []*treeIteration
	for _, it := range t.threads {
		ms, alive := it.eval.step(c, ev)
		for _, m := range ms {
			path := append(append([]*Record(nil), it.prior...), m)
			if it.depth >= t.e.Min {
				out = t.emit(out, c, path)
			}
			if it.depth < t.e.Max {
				next = append(next, &treeIteration{eval: t.r.start(t.e.L, c+1), start: c + 1, depth: it.depth + 1, prior: path})
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

func (t *treeRepeat) emit(out []*Record, c int, path []*Record) []*Record {
	out = append(out, &Record{Label: label(t.e), Start: t.s, End: c, Count: t.matches, Children: path})
	t.matches++
	return out
}

func (t *treeRepeat) record(end int) *Record {
	if t.matches > 0 {
		return leafRecord(t.e, t.s, end, t.matches)
	}
	path := t.lastDead
	for i := len(t.threads) - 1; i >= 0; i-- {
		if it := t.threads[i]; it.start <= end {
			path = append(append([]*Record(nil), it.prior...), it.eval.record(end))
			break
		}
	}
	return &Record{Label: label(t.e), Start: t.s, End: end, Children: path}
}

// treeNot evaluates ~a.
type treeNot struct {
	e         *Expr
	s         int
	a         treeEval
	lastMatch *Record
	matched   bool // ~a matched: a had none
}

func (n *treeNot) step(c int, ev uint64) ([]*Record, bool) {
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
	return []*Record{{Label: label(n.e), Start: n.s, End: c, Children: []*Record{n.a.record(c)}}}, false
}

func (n *treeNot) record(end int) *Record {
	if n.matched {
		return leafRecord(n.e, n.s, end, 1)
	}
	child := n.lastMatch
	if child == nil {
		child = n.a.record(end)
	}
	return &Record{Label: label(n.e), Start: n.s, End: end, Children: []*Record{child}}
}
