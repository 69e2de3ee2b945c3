// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The capture oracle: the set semantics of oracle_test.go with a dict per
// evaluation, written from dict.go's flow rules: a's dict to b in + / >>,
// each side's through |, merged (right side wins) in & and ^, every repeat
// iteration from the repeat's input, a repeat match with its last
// iteration's, the input dict for ~a and the vacuous >>; where & / first /
// once keep one match of several ending together, the least dict.

// testCaptures: predicate a binds x to the event's value; b holds where x is
// bound to the event's value; c binds y to it where x is not.
type testCaptures struct{ val int }

func (c testCaptures) Apply(i int, d Dict) (bool, Dict) {
	v := Value(strconv.Itoa(c.val))
	x, bound := d.Get("x")
	switch i {
	case 0:
		return true, d.With("x", v)
	case 1:
		return bound && x == v, d
	case 2:
		if bound && x == v {
			return false, d
		}
		return true, d.With("y", v)
	}
	return true, d
}

type dictEnd struct {
	end  int
	dict string
}

type dictOutcome struct {
	ends  map[dictEnd]uint64
	dicts map[string]Dict
	term  int
}

type dictOracle struct {
	evs  []Event
	mask uint64
}

func newOutcome(term int) dictOutcome {
	return dictOutcome{map[dictEnd]uint64{}, map[string]Dict{}, term}
}

func (o *dictOutcome) add(end int, d Dict, w uint64) {
	k := dictEnd{end, d.String()}
	o.ends[k] += w
	o.dicts[k.dict] = d
}

func (o dictOracle) eval(e *Expr, s int, d Dict) dictOutcome {
	if s > len(o.evs) {
		return newOutcome(live)
	}
	out := newOutcome(s)
	switch e.Op {
	case OpPred:
		ev := o.evs[s-1]
		if e.Index < 0 {
			out.add(s, d, 1)
			return out
		}
		if ev.Bits&(1<<uint(e.Index)) == 0 {
			return out
		}
		holds, after := true, d
		if o.mask&(1<<uint(e.Index)) != 0 {
			holds, after = ev.Captures.Apply(e.Index, d)
		}
		if holds {
			out.add(s, after, 1)
		}
		return out
	case OpConcat, OpFusion, OpCond:
		a := o.eval(e.L, s, d)
		if e.Op == OpCond && len(a.ends) == 0 && a.term != live {
			out.term = a.term
			out.add(a.term, d, 1)
			return out
		}
		out.term = a.term
		for k, w := range a.ends {
			next := k.end + 1
			if e.Op == OpFusion {
				next = k.end
			}
			b := o.eval(e.R, next, a.dicts[k.dict])
			for kb, wb := range b.ends {
				out.add(kb.end, b.dicts[kb.dict], w*wb)
			}
			out.term = max(out.term, b.term)
		}
		return out
	case OpAlt, OpAnd, OpIsect:
		a, b := o.eval(e.L, s, d), o.eval(e.R, s, d)
		out.term = max(a.term, b.term)
		switch e.Op {
		case OpAlt:
			for _, x := range []dictOutcome{a, b} {
				for k, w := range x.ends {
					out.add(k.end, x.dicts[k.dict], w)
				}
			}
		case OpIsect:
			for ka, wa := range a.ends {
				for kb, wb := range b.ends {
					out.add(max(ka.end, kb.end), a.dicts[ka.dict].Merge(b.dicts[kb.dict]), wa*wb)
				}
			}
		case OpAnd:
			least := map[int]Dict{}
			for ka := range a.ends {
				for kb := range b.ends {
					if ka.end != kb.end {
						continue
					}
					m := a.dicts[ka.dict].Merge(b.dicts[kb.dict])
					if l, ok := least[ka.end]; !ok || m.Compare(l) < 0 {
						least[ka.end] = m
					}
				}
			}
			for end, m := range least {
				out.add(end, m, 1)
			}
		}
		return out
	case OpRepeat:
		if e.Min == 0 {
			out.add(s, d, 1)
		}
		var iterate func(depth, start int, weight uint64)
		iterate = func(depth, start int, weight uint64) {
			r := o.eval(e.L, start, d)
			out.term = max(out.term, r.term)
			for k, w := range r.ends {
				if depth >= e.Min {
					out.add(k.end, r.dicts[k.dict], w*weight)
				}
				if depth < e.Max {
					iterate(depth+1, k.end+1, w*weight)
				}
			}
		}
		if e.Max > 0 {
			iterate(1, s, 1)
		}
		return out
	case OpNot:
		a := o.eval(e.L, s, d)
		out.term = a.term
		if a.term != live && len(a.ends) == 0 {
			out.add(a.term, d, 1)
		}
		return out
	case OpFirst, OpOnce:
		a := o.eval(e.L, s, d)
		out.term = a.term
		least := map[int]Dict{}
		first := math.MaxInt
		for k := range a.ends {
			first = min(first, k.end)
			if l, ok := least[k.end]; !ok || a.dicts[k.dict].Compare(l) < 0 {
				least[k.end] = a.dicts[k.dict]
			}
		}
		for end, m := range least {
			if e.Op == OpOnce || end == first {
				out.add(end, m, 1)
			}
		}
		if e.Op == OpFirst && first != math.MaxInt {
			out.term = first
		}
		return out
	}
	panic("unknown op")
}

func (o dictOracle) verdicts(e *Expr) verdicts {
	var out verdicts
	for s := 1; s <= len(o.evs); s++ {
		r := o.eval(e, s, Dict{})
		for k, w := range r.ends {
			for range w {
				out = append(out, fmt.Sprintf("M %d/%d %s", s, k.end, k.dict))
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

// dictVerdicts runs the monitor in capture mode with every tree, and lists
// each match with the dict of its tree.
func dictVerdicts(t testing.TB, e *Expr, mask uint64, evs []Event) verdicts {
	m := NewMonitor(Assertion{Expr: e, Passes: true, Trees: TreesAll, Captures: mask})
	var out verdicts
	collect := func(vs []Verdict) {
		for _, v := range vs {
			switch v.Kind {
			case Match:
				if uint64(len(v.Trees)) != v.Count {
					t.Fatalf("%s: MATCH %d/%d counts %d with %d trees", e, v.Start, v.End, v.Count, len(v.Trees))
				}
				for _, tr := range v.Trees {
					out = append(out, fmt.Sprintf("M %d/%d %s", v.Start, v.End, tr.Dict))
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
	if m.Threads() != 0 || m.Live() != 0 {
		t.Fatalf("%s: %d threads, %d roots left after Finish", e, m.Threads(), m.Live())
	}
	slices.Sort(out)
	return out
}

func randomCaptureEvents(r *rand.Rand, n int) []Event {
	evs := randomEvents(r, n)
	for i := range evs {
		evs[i].Captures = testCaptures{r.IntN(3)}
	}
	return evs
}

func TestCapturesAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 3000 {
		e := randomExpr(r, 1+r.IntN(4))
		evs := randomCaptureEvents(r, 1+r.IntN(10))
		mask := uint64(1 + r.IntN(7))
		if !UsesCaptures(e, mask) {
			continue
		}
		want := dictOracle{evs, mask}.verdicts(e)
		got := dictVerdicts(t, e, mask, evs)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: %s (captures %03b) over %v\n got  %s\n want %s", i, e, mask, evs,
				strings.Join(got, ", "), strings.Join(want, ", "))
		}
		// Without trees (where untriggered roots take no evaluation), the
		// same verdicts.
		if got, want := countedVerdicts(t, e, mask, evs), withoutDicts(want); !slices.Equal(got, want) {
			t.Fatalf("case %d without trees: %s (captures %03b)\n got  %s\n want %s", i, e, mask,
				strings.Join(got, ", "), strings.Join(want, ", "))
		}
	}
}

// Capture mode with predicates that neither bind nor compare gives the
// verdicts of the fast evaluator (the oracle), each match with an empty dict.
func TestCaptureModeAgreesWithoutCaptures(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := range 1500 {
		e := randomExpr(r, 1+r.IntN(4))
		evs := randomEvents(r, 1+r.IntN(10))
		for j := range evs {
			evs[j].Captures = passCaptures{}
		}
		if !UsesCaptures(e, 7) {
			continue
		}
		got := dictVerdicts(t, e, 7, evs)
		want := oracleVerdicts(e, false, len(evs), bitsOf(evs))
		for j := range want {
			if strings.HasPrefix(want[j], "M ") {
				want[j] += " {}"
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: %s\n got  %v\n want %v", i, e, got, want)
		}
	}
}

type passCaptures struct{}

func (passCaptures) Apply(_ int, d Dict) (bool, Dict) { return true, d }

// The city asked about is the city answered: a capture, and a comparison
// with it, printed in the tree.
func TestCaptureTree(t *testing.T) {
	caps := func(v string) Captures { return cityCaptures(v) }
	evs := []Event{
		{Bits: 1, Time: 10, Captures: caps(`"New York"`)},
		{Bits: 2, Time: 20, Captures: caps(`"London"`)},
		{Bits: 2, Time: 30, Captures: caps(`"New York"`)},
	}
	e, err := Parse("ask >> (~same) * (0,5) + same", []string{"ask", "same"})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMonitor(Assertion{Expr: e, Trees: TreesAll, Passes: true, Captures: 3})
	var got []string
	for _, ev := range evs {
		for _, v := range m.Step(ev) {
			for _, tr := range v.Trees {
				got = append(got, v.Kind.String()+" "+strconv.Itoa(v.Start)+"\n"+tr.Format(tenTimes))
			}
		}
	}
	want := `MATCH 1
>> (1/3) (10/30) 1 {city: "New York"}
  ask (1/1) (10/10) 0 {city: "New York"}
  + (2/3) (20/30) 1 {city: "New York"}
    repeat (2/2) (20/20) 1 {city: "New York"}
      inv (2/2) (20/20) 0 {city: "New York"}
        same (2/2) (20/20) 0 {city: "New York"}
    same (3/3) (30/30) 0 {city: "New York"}
`
	if !slices.Contains(got, want) {
		t.Errorf("missing\n%s\nin\n%s", want, strings.Join(got, "\n"))
	}
}

// cityCaptures: ask (0) binds city, same (1) holds where it is this city.
type cityCaptures Value

func (c cityCaptures) Apply(i int, d Dict) (bool, Dict) {
	if i == 0 {
		return true, d.With("city", Value(c))
	}
	v, ok := d.Get("city")
	return ok && v == Value(c), d
}

func TestDict(t *testing.T) {
	var d Dict
	d1 := d.With("b", "1").With("a", `"x"`)
	if d.Len() != 0 || d1.String() != `{a: "x", b: 1}` {
		t.Fatalf("d %s, d1 %s", d, d1)
	}
	d2 := d1.With("a", "2")
	if v, _ := d1.Get("a"); v != `"x"` {
		t.Errorf("rebinding changed the original: %s", d1)
	}
	if got := d1.Merge(Dict{}.With("a", "3").With("c", "4")).String(); got != `{a: 3, b: 1, c: 4}` {
		t.Errorf("merge: %s", got)
	}
	if d1.Compare(d2) >= 0 || d.Compare(d1) >= 0 || !d1.Equal(d1.With("b", "1")) {
		t.Errorf("compare %s %s", d1, d2)
	}
}

// A runaway capture expression is abandoned with an ERROR verdict, and the
// monitor goes on.
func TestCaptureThreadCap(t *testing.T) {
	e, err := Parse("a >> ok * (1,100) + b", abc)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMonitor(Assertion{Expr: e, MaxThreads: 50, Captures: 1})
	errs := 0
	for i := range 40 {
		for _, v := range m.Step(Event{Bits: 1, Captures: testCaptures{i % 3}}) {
			if v.Kind == Error {
				errs++
			}
		}
	}
	if errs == 0 || m.Errors() != errs || m.Threads() > 50 {
		t.Errorf("%d errors (%d counted), %d threads", errs, m.Errors(), m.Threads())
	}
	m.Finish()
	if m.Threads() != 0 {
		t.Errorf("%d threads after Finish", m.Threads())
	}
}

// An expression without capture predicates stays allocation-free although
// the assertion declares some and its events carry captures.
func TestNoAllocationsWithoutCaptures(t *testing.T) {
	e, err := Parse("a >> b + c", abc)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMonitor(Assertion{Expr: e, Captures: 1 << 3})
	var caps Captures = testCaptures{1}
	evs := []Event{{Bits: 1, Captures: caps}, {Bits: 2, Captures: caps}, {Bits: 4, Captures: caps}, {Bits: 1, Captures: caps}}
	for _, ev := range evs {
		m.Step(ev)
	}
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		m.Step(evs[i%len(evs)])
		i++
	}); n != 0 {
		t.Errorf("%v allocations a step", n)
	}
}

// countedVerdicts runs capture mode without trees: matches by their count.
func countedVerdicts(t testing.TB, e *Expr, mask uint64, evs []Event) verdicts {
	m := NewMonitor(Assertion{Expr: e, Passes: true, Captures: mask})
	var out verdicts
	collect := func(vs []Verdict) {
		for _, v := range vs {
			if v.Trees != nil {
				t.Fatalf("%s: trees not asked for: %v", e, v.Trees)
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
			}
		}
	}
	for _, ev := range evs {
		collect(m.Step(ev))
	}
	collect(m.Finish())
	slices.Sort(out)
	return out
}

func withoutDicts(vs verdicts) verdicts {
	out := make(verdicts, len(vs))
	for i, v := range vs {
		if strings.HasPrefix(v, "M ") {
			v = v[:strings.IndexByte(v, '{')-1]
		}
		out[i] = v
	}
	slices.Sort(out)
	return out
}

// FuzzCaptureEngine holds capture mode to the capture oracle on fuzzed
// expressions, signals, values and capture masks.
func FuzzCaptureEngine(f *testing.F) {
	f.Add("a + b", uint64(0b010001), uint64(0x21), uint8(6), uint8(3))
	f.Add("first(a | c) + once(b & b)", uint64(0x5a5a), uint64(0x1234), uint8(9), uint8(7))
	f.Add("(a ^ c) * (1,2) >> ~b", uint64(0x2b4d), uint64(0x999), uint8(8), uint8(5))
	f.Fuzz(func(t *testing.T, src string, bits, vals uint64, n, mask uint8) {
		e, err := Parse(src, abc)
		m := uint64(mask & 7)
		if err != nil || len(src) > 40 || maxRepeat(e) > 4 || !UsesCaptures(e, m) {
			return
		}
		evs := make([]Event, 1+int(n)%10)
		for i := range evs {
			evs[i] = Event{Bits: (bits >> (3 * uint(i))) & 7, Captures: testCaptures{int(vals>>(2*uint(i))) % 3}}
		}
		want := dictOracle{evs, m}.verdicts(e)
		if got := dictVerdicts(t, e, m, evs); !slices.Equal(got, want) {
			t.Fatalf("%s (captures %03b)\n got  %v\n want %v", e, m, got, want)
		}
	})
}

// A capture monitor reused across sequences (Finish, then Step) judges each
// as a fresh monitor does; anchored, it starts one evaluation a sequence.
func TestCaptureMonitorAcrossSequences(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for i := range 300 {
		e := randomExpr(r, 1+r.IntN(3))
		if !UsesCaptures(e, 7) {
			continue
		}
		for _, anchored := range []bool{false, true} {
			reused := NewMonitor(Assertion{Expr: e, Passes: true, Trees: TreesAll, Captures: 7, Anchored: anchored})
			for range 3 {
				evs := randomCaptureEvents(r, 1+r.IntN(8))
				fresh := NewMonitor(Assertion{Expr: e, Passes: true, Trees: TreesAll, Captures: 7, Anchored: anchored})
				got, want := runAll(reused, evs), runAll(fresh, evs)
				if got != want {
					t.Fatalf("case %d %s (anchored %v):\n reused %s\n fresh  %s", i, e, anchored, got, want)
				}
				if anchored && strings.Count(want, "start 1 ") != strings.Count(want, "start ") {
					t.Fatalf("case %d %s: anchored verdicts of other starts: %s", i, e, want)
				}
			}
		}
	}
}

func runAll(m *Monitor, evs []Event) string {
	var b strings.Builder
	add := func(vs []Verdict) {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s start %d end %d count %d;", v.Kind, v.Start, v.End, v.Count)
			for _, tr := range v.Trees {
				b.WriteString(tr.Format(func(int) int64 { return 0 }))
			}
		}
	}
	for _, ev := range evs {
		add(m.Step(ev))
	}
	add(m.Finish())
	return b.String()
}
