// SPDX-License-Identifier: Apache-2.0

package texpr

import (
	"math/rand/v2"
	"testing"
)

var agentPredicates = []string{"xferToGreeting", "xferToFarewell", "xferToWeather", "sayHello", "sayGoodbye", "getWeather"}

// The paper's agent assertions (spec §3).
var paperAssertions = []string{
	"xferToGreeting >> sayHello + xferToWeather",
	"xferToFarewell >> sayGoodbye + xferToWeather",
	"xferToWeather >> (getWeather | xferToGreeting | xferToFarewell)",
}

// oneHot is a stream in which exactly one predicate holds at each event.
func oneHot(n, preds int) []Event {
	r := rand.New(rand.NewPCG(7, 8))
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = Event{Bits: 1 << uint(r.IntN(preds)), Time: int64(i), Ref: i}
	}
	return evs
}

func paperMonitors(b *testing.B, trees Trees) []*Monitor {
	var ms []*Monitor
	for _, src := range paperAssertions {
		e, err := Parse(src, agentPredicates)
		if err != nil {
			b.Fatal(err)
		}
		ms = append(ms, NewMonitor(Assertion{Expr: e, Trees: trees}))
	}
	return ms
}

// BenchmarkPaperAssertions: one op is one event through all three assertions.
func BenchmarkPaperAssertions(b *testing.B) {
	for _, tc := range []struct {
		name  string
		trees Trees
	}{{"verdicts", TreesNone}, {"violation_trees", TreesViolations}} {
		b.Run(tc.name, func(b *testing.B) {
			stream := oneHot(100_000, len(agentPredicates))
			ms := paperMonitors(b, tc.trees)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				ev := stream[i%len(stream)]
				for _, m := range ms {
					m.Step(ev)
				}
				if i%len(stream) == len(stream)-1 {
					for _, m := range ms {
						m.Finish()
					}
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkWideRepeat: a window of 50 live evaluations, each with a repeat
// and a conditional: the per-thread cost.
func BenchmarkWideRepeat(b *testing.B) {
	e, err := Parse("sayHello >> ok * (1,50) + xferToWeather", agentPredicates)
	if err != nil {
		b.Fatal(err)
	}
	stream := oneHot(100_000, len(agentPredicates))
	m := NewMonitor(Assertion{Expr: e})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		m.Step(stream[i%len(stream)])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(m.Threads()), "threads")
}

// BenchmarkCaptures: one op is one event through an assertion that binds a
// city and compares with it (capture mode, the tree evaluator), beside the
// same expression over plain predicates (the allocation-free evaluator).
// Half the asks are answered with their own city within two events.
func BenchmarkCaptures(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	cities := []Value{`"New York"`, `"London"`, `"Paris"`}
	stream := make([]Event, 100_000)
	for i := range stream {
		stream[i] = Event{Bits: 1 << uint(r.IntN(3)), Time: int64(i), Captures: cityCaptures(cities[r.IntN(len(cities))])}
	}
	e, err := Parse("ask >> ok * (0,2) + same", []string{"ask", "same", "other"})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		captures uint64
	}{{"without_captures", 0}, {"with_captures", 3}} {
		b.Run(tc.name, func(b *testing.B) {
			m := NewMonitor(Assertion{Expr: e, Captures: tc.captures})
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				m.Step(stream[i%len(stream)])
				if i%len(stream) == len(stream)-1 {
					m.Finish()
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
