// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"
)

// run feeds signals through an assertion and lists its verdicts in order.
func run(t *testing.T, a Assertion, expr string, signals map[string]string) string {
	t.Helper()
	names, evs := signalEvents(signals)
	e, err := Parse(expr, names)
	if err != nil {
		t.Fatal(err)
	}
	a.Expr = e
	m := NewMonitor(a)
	var out []string
	add := func(vs []Verdict) {
		for _, v := range vs {
			s := fmt.Sprintf("%v %d/%d", v.Kind, v.Start, v.End)
			if v.Violation {
				s += "!"
			}
			out = append(out, s)
		}
	}
	for _, ev := range evs {
		add(m.Step(ev))
	}
	add(m.Finish())
	return strings.Join(out, " ")
}

func TestEndPolicies(t *testing.T) {
	sig := map[string]string{"x": "0101", "r": "0010"}
	// x at 2 is answered by r at 3; x at 4 waits for cycle 5.
	for _, tc := range []struct {
		policy EndPolicy
		want   string
	}{
		{EndInconclusive, "PENDING 4/4"},
		{EndFail, "FAILURE 4/4!"},
		{EndIgnore, ""},
	} {
		if got := run(t, Assertion{OnEnd: tc.policy}, "x >> r", sig); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.policy, got, tc.want)
		}
	}
}

func TestFailAtEndHasTree(t *testing.T) {
	names, evs := signalEvents(map[string]string{"x": "01", "r": "00"})
	e, _ := Parse("x >> ok + r", names)
	m := NewMonitor(Assertion{Expr: e, OnEnd: EndFail, Trees: TreesViolations})
	for _, ev := range evs {
		m.Step(ev)
	}
	vs := m.Finish()
	if len(vs) != 1 || len(vs[0].Trees) != 1 {
		t.Fatalf("verdicts %+v", vs)
	}
	// ok + r, waiting for cycle 3, had not started: only x's record shows.
	want := ">> (2/2) (20/20) 0 {}\n  x (2/2) (20/20) 1 {}\n"
	if got := vs[0].Trees[0].Format(tenTimes); got != want {
		t.Errorf("tree\n%s\nwant\n%s", got, want)
	}
}

// A verdict's explanation is the caller's once it has it: after Rest the
// monitor keeps no reference to it, the verdicts the caller took are
// unchanged, and a monitor with nothing running keeps no running part.
func TestRestKeepsNoTree(t *testing.T) {
	names, evs := signalEvents(map[string]string{"x": "01", "r": "00"})
	e, _ := Parse("x >> r", names)
	m := NewMonitor(Assertion{Expr: e, OnEnd: EndFail, Trees: TreesViolations})
	for _, ev := range evs {
		m.Step(ev)
		m.Rest()
	}
	if m.run == nil || m.Live() != 1 {
		t.Fatalf("x waits for r: running %v, %d live", m.run != nil, m.Live())
	}
	vs := m.Finish()
	if len(vs) != 1 || !vs[0].Violation || len(vs[0].Trees) != 1 {
		t.Fatalf("verdicts %+v", vs)
	}
	m.Rest()
	if m.run != nil {
		t.Errorf("after Rest with nothing running the monitor keeps its running part (%d verdicts)", len(m.run.verdicts))
	}
	if len(vs[0].Trees) != 1 {
		t.Error("the caller's verdict lost its tree")
	}
}

// A monitor that rests after every step and every end decides what one that
// never rests decides, explanation trees and all: random expressions over
// random streams, three sequences each, always and never, anchored or not,
// with passes or without, and thread caps small enough to be hit.
func TestRestChangesNoVerdict(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	policies := []EndPolicy{EndInconclusive, EndFail, EndIgnore}
	trees := []Trees{TreesAll, TreesViolations, TreesNone}
	for i := range 4000 {
		a := Assertion{Expr: randomExpr(r, 1+r.IntN(4)), OnEnd: policies[r.IntN(len(policies))],
			Never: r.IntN(2) == 0, Anchored: r.IntN(2) == 0, MaxThreads: r.IntN(5), Passes: r.IntN(2) == 0}
		if a.Trees = trees[r.IntN(len(trees))]; a.Passes {
			a.Trees = TreesAll
		}
		plain, resting := NewMonitor(a), NewMonitor(a)
		for seq := range 3 {
			for j, ev := range randomEvents(r, 1+r.IntN(12)) {
				want := describeVerdicts(plain.Step(ev))
				got := describeVerdicts(resting.Step(ev))
				resting.Rest()
				if got != want {
					t.Fatalf("case %d, %s, sequence %d, event %d: resting\n%s\nplain\n%s", i, a.Expr, seq, j, got, want)
				}
			}
			want := describeVerdicts(plain.Finish())
			got := describeVerdicts(resting.Finish())
			resting.Rest()
			if got != want {
				t.Fatalf("case %d, %s, sequence %d, end: resting\n%s\nplain\n%s", i, a.Expr, seq, got, want)
			}
		}
	}
}

// describeVerdicts is everything a verdict says, its trees formatted.
func describeVerdicts(vs []Verdict) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "%v %d/%d x%d refs %d/%d violation %t note %q\n", v.Kind, v.Start, v.End, v.Count, v.StartRef, v.EndRef, v.Violation, v.TreeNote)
		for _, tr := range v.Trees {
			b.WriteString(tr.Format(tenTimes))
		}
	}
	return b.String()
}

func TestNever(t *testing.T) {
	sig := map[string]string{"a": "0110", "b": "0011"}
	// never a + b: a at 2 then b at 3 is a violation; a at 3, b at 4 too.
	got := run(t, Assertion{Never: true, Passes: true}, "a + b", sig)
	want := "FAILURE 1/1 MATCH 2/3! MATCH 3/4! FAILURE 4/4"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := run(t, Assertion{Never: true}, "a + b", sig); got != "MATCH 2/3! MATCH 3/4!" {
		t.Errorf("violations only: got %q", got)
	}
	// A live never-evaluation is not a violation, whatever the policy.
	if got := run(t, Assertion{Never: true, OnEnd: EndFail}, "a + ok + ok", map[string]string{"a": "001"}); got != "" {
		t.Errorf("never at the end: got %q", got)
	}
}

func TestThreadCap(t *testing.T) {
	// ok * (1,1000) + a keeps every evaluation alive: two more threads an event.
	names, evs := signalEvents(map[string]string{"a": strings.Repeat("0", 200)})
	e, _ := Parse("ok * (1,1000) + a", names)
	m := NewMonitor(Assertion{Expr: e, MaxThreads: 100})
	var errs []Verdict
	for _, ev := range evs {
		for _, v := range m.Step(ev) {
			if v.Kind == Error {
				errs = append(errs, v)
			}
		}
		if m.Threads() > 200 {
			t.Fatalf("cycle %d: %d threads with a cap of 100", m.Cycle(), m.Threads())
		}
	}
	if len(errs) == 0 || m.Errors() != len(errs) {
		t.Fatalf("errors %v, counted %d", errs, m.Errors())
	}
	if !strings.Contains(errs[0].TreeNote, "more than 100 live threads") || errs[0].Count == 0 {
		t.Errorf("error verdict %+v", errs[0])
	}
	m.Finish()
	if m.Threads() != 0 {
		t.Errorf("%d threads after Finish", m.Threads())
	}
}

func TestTreeBudget(t *testing.T) {
	// 2^12 paths to one match: the verdict counts them all; its trees would
	// exceed the cap and are omitted with a note.
	names, evs := signalEvents(map[string]string{"a": strings.Repeat("1", 12)})
	e, _ := Parse("(a | a) * 12", names)
	m := NewMonitor(Assertion{Expr: e, MaxThreads: 1000, Trees: TreesAll, Passes: true})
	var got []Verdict
	for _, ev := range evs {
		got = append(got, m.Step(ev)...)
	}
	if len(got) != 1 || got[0].Count != 4096 || got[0].Trees != nil || !strings.Contains(got[0].TreeNote, "trace omitted") {
		t.Fatalf("verdicts %+v", got)
	}
}

func TestRefsAndTimestamps(t *testing.T) {
	names := []string{"x", "r"}
	e, _ := Parse("x >> ok + r", names)
	m := NewMonitor(Assertion{Expr: e})
	m.Step(Event{Bits: 1, Time: 1000, Ref: 7})
	m.Step(Event{Bits: 0, Time: 2000, Ref: 8})
	vs := m.Step(Event{Bits: 0, Time: 3000, Ref: 9})
	if len(vs) != 1 || vs[0].StartRef != 7 || vs[0].EndRef != 9 || m.Timestamp(vs[0].End) != 3000 {
		t.Fatalf("verdicts %+v", vs)
	}
}

// A monitor is kept per assertion per open group: one whose trigger has not
// held is its history and a few counters, without the running part.
func TestIdleMonitorKeepsNoRunningPart(t *testing.T) {
	if size := unsafe.Sizeof(Monitor{}); size > 64 {
		t.Errorf("a Monitor is %d bytes, more than 64", size)
	}
	e, err := Parse("a >> b", []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	m := NewMonitor(Assertion{Expr: e})
	for i := 0; i < 10; i++ {
		if vs := m.Step(Event{Bits: 0b10, Ref: i}); len(vs) > 0 {
			t.Fatalf("step %d: %v", i, vs)
		}
	}
	if m.run != nil {
		t.Error("a monitor whose trigger never held made its running part")
	}
	m.Step(Event{Bits: 0b01, Ref: 10})
	if m.run == nil || m.Live() != 1 {
		t.Fatalf("after its trigger: running %v, %d live", m.run != nil, m.Live())
	}
	if vs := m.Step(Event{Bits: 0b10, Ref: 11}); len(vs) != 0 {
		t.Fatalf("the response: %v", vs)
	}
	if m.Live() != 0 || m.Threads() != 0 {
		t.Errorf("after the response: %d live, %d threads", m.Live(), m.Threads())
	}
}
