// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"cmp"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// located is a span with the resource and scope it sits under.
type located struct {
	rs   ptrace.ResourceSpans
	ss   ptrace.ScopeSpans
	span ptrace.Span
}

// spansInOrder lists every span by start time, then end time, then span ID.
func spansInOrder(td ptrace.Traces) []located {
	var out []located
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				out = append(out, located{rs, ss, sp})
			}
		}
	}
	slices.SortFunc(out, func(a, b located) int {
		ida, idb := a.span.SpanID(), b.span.SpanID()
		return cmp.Or(cmp.Compare(a.span.StartTimestamp(), b.span.StartTimestamp()),
			cmp.Compare(a.span.EndTimestamp(), b.span.EndTimestamp()),
			slices.Compare(ida[:], idb[:]))
	})
	return out
}

// event is what a test checks at one sampling event.
type event struct {
	name string
	bits Bits
}

// events runs a Set over a fixture's spans in order, latches included.
func events(t testing.TB, s *Set, td ptrace.Traces) []event {
	var out []event
	latch := s.NewLatch()
	for _, l := range spansInOrder(td) {
		if ok, sig := s.Eval(l.rs, l.ss, l.span); ok {
			out = append(out, event{l.span.Name(), latch.Step(sig)})
		}
	}
	return out
}

func mustCompile(t testing.TB, cfg Config, onError func(string, error)) *Set {
	t.Helper()
	s, err := Compile(cfg, Settings{Telemetry: componenttest.NewNopTelemetrySettings(), OnError: onError})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// labels names the predicates that hold, "" when none does.
func labels(s *Set, b Bits) string {
	var out string
	for i, n := range s.Names() {
		if b.Has(i) {
			if out != "" {
				out += "+"
			}
			out += n
		}
	}
	return out
}
