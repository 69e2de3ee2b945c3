// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// jsConversation is a correct run of the paper's agents as ADK for
// TypeScript exports it with a fast (scripted) model: transfer to the
// greeting agent, say_hello, transfer back, then get_weather, each call
// under a millisecond apart. A span's start is Date.now() (whole
// milliseconds), its end that start plus the precise duration; the batch
// span processor sends spans in the order they end.
func jsConversation(rng *rand.Rand, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	clock := 1_700_000_000_000_000_000 + float64(n)*1e9 + rng.Float64()*1e6
	calls := []struct{ tool, args string }{
		{"transfer_to_agent", `{"agentName":"greeting_agent"}`},
		{"say_hello", `{}`},
		{"transfer_to_agent", `{"agentName":"weather_agent_v2"}`},
		{"get_weather", `{"city":"Paris"}`},
	}
	for i, c := range calls {
		start := clock + rng.Float64()*150_000
		duration := 30_000 + rng.Float64()*300_000
		clock = start + duration
		ms := math.Floor(start/1e6) * 1e6
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{1, byte(n), byte(n >> 8), 2})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1), byte(n), byte(n >> 8)})
		sp.SetName("execute_tool " + c.tool)
		sp.SetStartTimestamp(pcommon.Timestamp(ms))
		sp.SetEndTimestamp(pcommon.Timestamp(ms + duration))
		sp.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
		sp.Attributes().PutStr("gen_ai.tool.name", c.tool)
		sp.Attributes().PutStr("gcp.vertex.agent.tool_call_args", c.args)
	}
	return td
}

// endOrderWrong reports whether ordering the calls by start, then end (the
// rule before), puts them out of their true order.
func endOrderWrong(td ptrace.Traces) bool {
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	idx := make([]int, spans.Len())
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		sa, sb := spans.At(a), spans.At(b)
		return cmp.Or(cmp.Compare(sa.StartTimestamp(), sb.StartTimestamp()), cmp.Compare(sa.EndTimestamp(), sb.EndTimestamp()))
	})
	return !slices.IsSorted(idx)
}

// Correct conversations with the JS SDK's timestamps: no false violation,
// where ordering ties by end time misorders many of them.
func TestJSTimestampsNoFalseViolations(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const runs = 200
	p, sink := newTestProcessor(t, "paper", nil)
	misordered := 0
	for n := range runs {
		td := jsConversation(rng, n)
		if endOrderWrong(td) {
			misordered++
		}
		feed(t, p, td)
	}
	shutdown(t, p)
	if got := verdictsOf(sink); len(got) != 0 {
		t.Errorf("%d false violations on correct runs: %v", len(got), got[:min(len(got), 5)])
	}
	if misordered == 0 {
		t.Fatal("no conversation that end times misorder: the generator tests nothing")
	}
	t.Logf("%d of %d correct conversations misordered by end time; 0 false violations", misordered, runs)
}
