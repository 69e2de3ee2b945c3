// SPDX-License-Identifier: Apache-2.0

package assertion

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// For every prefix of random sequences, what WouldDecide says the next
// event would decide is what stepping the group by it decides, and asking
// changes nothing: the group then goes on as if never asked.
func TestWouldDecideIsTheNextStep(t *testing.T) {
	compiled, err := Compile([]Config{
		{Name: "te1", Always: "xferToGreeting >> sayHello + xferToWeather"},
		{Name: "self", Never: "xferToGreeting + xferToGreeting"},
		{Name: "requires", Always: "sayHello >> xferToWeather", OnEnd: "fail"},
	}, paperPredicates, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 200 {
		bits := make([]uint64, len(names))
		for i := range bits {
			bits[i] = uint64(rng.IntN(8))
		}
		asked, plain := NewRunner(compiled, Options{}), NewRunner(compiled, Options{})
		ga, gp := asked.NewGroup(), plain.NewGroup()
		scratch := asked.NewScratch()
		evs := events(names, bits...)
		for i, ev := range evs {
			h := asked.WouldDecide("g", ga, scratch, []Event{ev})
			got := asked.Step("g", ga, []Event{ev})
			want := plain.Step("g", gp, []Event{ev})
			if !sameVerdicts(h.Verdicts, want) || !sameVerdicts(got, want) {
				t.Fatalf("run %d, event %d (bits %03b): would decide %v, stepping decides %v, a group never asked %v",
					run, i+1, ev.Bits, kinds(h.Verdicts), kinds(got), kinds(want))
			}
		}
		if !sameVerdicts(asked.End("g", ga), plain.End("g", gp)) {
			t.Fatalf("run %d: the end differs", run)
		}
	}
}

// A group not begun answers from a fresh sequence: the action is its first
// event.
func TestWouldDecideOnAGroupNotBegun(t *testing.T) {
	compiled, err := Compile([]Config{{Name: "first", Initially: "sayHello"}}, paperPredicates, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(compiled, Options{})
	h := r.WouldDecide("g", nil, r.NewScratch(), events([]string{"weather"}, xferToWeather))
	if len(h.Verdicts) != 1 || !h.Verdicts[0].Violation {
		t.Fatalf("first event not a hello: %v, want one violation", kinds(h.Verdicts))
	}
}

// Once warm, a question about a group of plain assertions allocates only
// what a violation's explanation needs: none when the action passes.
func TestWouldDecideAllocatesNothingWhenWarm(t *testing.T) {
	r := NewRunner(te1(t, ""), Options{})
	g := r.NewGroup()
	r.Step("g", g, events([]string{"greet", "hello", "greet", "hello"}, xferToGreeting, sayHello, xferToGreeting, sayHello))
	scratch := r.NewScratch()
	next := events([]string{"weather"}, xferToWeather)
	r.WouldDecide("g", g, scratch, next)
	if n := testing.AllocsPerRun(100, func() { r.WouldDecide("g", g, scratch, next) }); n != 0 {
		t.Errorf("%v allocations a question, want 0", n)
	}
}

func sameVerdicts(a, b []Verdict) bool {
	return slices.EqualFunc(a, b, func(x, y Verdict) bool {
		return x.Assertion.Name == y.Assertion.Name && x.Kind == y.Kind && x.Start == y.Start && x.End == y.End && x.Explanation == y.Explanation
	})
}

func kinds(vs []Verdict) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Assertion.Name+":"+v.Kind.String())
	}
	return out
}

// BenchmarkWouldDecide: a question about a group of the paper's te1 after
// twenty events (a replay of them and one step, into a warm scratch group),
// beside judging those twenty events in a new group as the processor does
// (events built, monitors made, verdicts explained), in the same run.
func BenchmarkWouldDecide(b *testing.B) {
	compiled, err := Compile([]Config{{Name: "te1", Always: "xferToGreeting >> sayHello + xferToWeather"}}, paperPredicates, 0)
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, 20)
	bits := make([]uint64, 20)
	for i := range bits {
		names[i], bits[i] = "e", []uint64{xferToGreeting, sayHello, xferToWeather, 0}[i%4]
	}
	next := events([]string{"weather"}, xferToWeather)
	b.Run("judge-20-events", func(b *testing.B) {
		r := NewRunner(compiled, Options{})
		b.ReportAllocs()
		for b.Loop() {
			g := r.NewGroup()
			r.Step("g", g, events(names, bits...))
		}
	})
	b.Run("question", func(b *testing.B) {
		r := NewRunner(compiled, Options{})
		g := r.NewGroup()
		r.Step("g", g, events(names, bits...))
		scratch := r.NewScratch()
		b.ReportAllocs()
		for b.Loop() {
			r.WouldDecide("g", g, scratch, next)
		}
	})
}
