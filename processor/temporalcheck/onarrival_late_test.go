// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// splitByAttribute moves the spans of td that carry key into a copy of
// their resource and scope in another Traces, returned.
func splitByAttribute(td ptrace.Traces, key string) ptrace.Traces {
	out := ptrace.NewTraces()
	for _, rs := range td.ResourceSpans().All() {
		ors := out.ResourceSpans().AppendEmpty()
		rs.Resource().CopyTo(ors.Resource())
		for _, ss := range rs.ScopeSpans().All() {
			oss := ors.ScopeSpans().AppendEmpty()
			ss.Scope().CopyTo(oss.Scope())
			ss.Spans().RemoveIf(func(sp ptrace.Span) bool {
				if _, ok := sp.Attributes().Get(key); !ok {
					return false
				}
				sp.CopyTo(oss.Spans().AppendEmpty())
				return true
			})
		}
	}
	return out
}

// Judged on arrival, a trace whose group is not known within wait is
// judged as a group of its own; the spans that name its conversation after
// that are late, and said so (late_spans, logged once), as when judged
// complete. The batches of a trace taken on arrival are not.
func TestLateSpansOnArrivalAreCounted(t *testing.T) {
	for _, split := range []bool{false, true} {
		p, _, clock, reader, logs := observed(t, "paper", func(c *Config) {
			c.GroupBy = "gen_ai.conversation.id"
			c.Judge = JudgeOnArrival
		})
		td := fixtures.Traces(t, "adk-weather/adk-good-42-0.json")
		named := splitByAttribute(td, "gen_ai.conversation.id") // ADK names it on its agents' spans alone
		if split {
			feed(t, p, td)
			clock.t = clock.t.Add(time.Minute) // past wait: judged as a group of its own
			p.Tick(clock.t)
			feed(t, p, named)
		} else {
			feed(t, p, named) // the conversation known at once: taken on arrival
			feed(t, p, td)    // the rest of the trace, a batch after it
		}
		clock.t = clock.t.Add(time.Minute)
		p.Tick(clock.t)
		shutdown(t, p)
		late := sums(t, reader)["otelcol_processor_temporalcheck_late_spans"]
		said := false
		for _, e := range logs.All() {
			said = said || strings.HasPrefix(e.Message, "spans arrived after their trace was judged")
		}
		switch {
		case split && (late != 3 || !said):
			t.Errorf("named after wait: %d late spans counted (want 3), said %v", late, said)
		case !split && (late != 0 || said):
			t.Errorf("a trace taken on arrival, in two batches: %d late spans counted, said %v", late, said)
		}
	}
}
