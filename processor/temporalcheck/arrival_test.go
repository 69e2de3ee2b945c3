// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// oneSpanBatches splits td into batches of one span each, in the order the
// file holds them (the order the SDK exported them), as an SDK that
// flushes after every span would send them.
func oneSpanBatches(td ptrace.Traces) []ptrace.Traces {
	var out []ptrace.Traces
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				one := ptrace.NewTraces()
				ors := one.ResourceSpans().AppendEmpty()
				rs.Resource().CopyTo(ors.Resource())
				oss := ors.ScopeSpans().AppendEmpty()
				ss.Scope().CopyTo(oss.Scope())
				sp.CopyTo(oss.Spans().AppendEmpty())
				out = append(out, one)
			}
		}
	}
	return out
}

// Judged on arrival, span by span as exported, the conversations of three
// frameworks get the verdicts they get when each trace is held until it is
// complete.
func TestJudgeOnArrivalAgreesWithWhenComplete(t *testing.T) {
	for file, name := range map[string]string{
		"adk-js/weak-run-05.json":                               "paper",
		"adk-js/strong-run-01.json":                             "paper",
		"langgraph-openinference/weak-self-handoff.json":        "openinference",
		"langgraph-openinference/strong-explicit-handback.json": "openinference",
	} {
		complete, sink := newTestProcessor(t, name, func(c *Config) { c.GroupBy = "conversation" })
		feed(t, complete, fixtures.Traces(t, file))
		shutdown(t, complete)
		want := verdictsOf(sink)

		arrival, sink := newTestProcessor(t, name, func(c *Config) { c.GroupBy, c.Judge = "conversation", JudgeOnArrival })
		n := feed(t, arrival, oneSpanBatches(fixtures.Traces(t, file))...)
		shutdown(t, arrival)
		if got := verdictsOf(sink); !slices.Equal(got, want) || sink.SpanCount() != n {
			t.Errorf("%s on arrival: %v (%d of %d spans), when complete: %v", file, got, sink.SpanCount(), n, want)
		}
	}
}
