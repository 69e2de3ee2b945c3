package probguard

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/processor/probguard/internal/metadata"
)

// step is one tool call of the stove agent: the tool, and whether the fork
// is on the burner after it (the environment state the agent reports).
type step struct {
	tool string
	fork bool
}

var epoch = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)

// stoveTrace is one run of the stove agent as the GenAI semantic
// conventions trace it: an invoke_agent root and one execute_tool span a
// step, a second apart. conversation, if set, is gen_ai.conversation.id.
func stoveTrace(n int, conversation string, steps ...step) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "household-agent")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("opentelemetry.instrumentation.genai")
	var tid pcommon.TraceID
	binary.BigEndian.PutUint64(tid[8:], uint64(n)+1)
	start := epoch.Add(time.Duration(n) * time.Minute)
	root := ss.Spans().AppendEmpty()
	root.SetTraceID(tid)
	root.SetSpanID(spanID(n, 0))
	root.SetName("invoke_agent household_agent")
	root.SetKind(ptrace.SpanKindInternal)
	root.Attributes().PutStr("gen_ai.operation.name", "invoke_agent")
	root.Attributes().PutStr("gen_ai.agent.name", "household_agent")
	if conversation != "" {
		root.Attributes().PutStr("gen_ai.conversation.id", conversation)
	}
	root.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	root.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(len(steps)+1) * time.Second)))
	for i, st := range steps {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(tid)
		sp.SetSpanID(spanID(n, i+1))
		sp.SetParentSpanID(root.SpanID())
		sp.SetName("execute_tool " + st.tool)
		sp.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
		sp.Attributes().PutStr("gen_ai.tool.name", st.tool)
		sp.Attributes().PutStr("gen_ai.tool.call.id", fmt.Sprintf("call_%d_%d", n, i))
		sp.Attributes().PutBool("env.fork_on_burner", st.fork)
		at := start.Add(time.Duration(i+1) * time.Second)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(at))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(at.Add(200 * time.Millisecond)))
	}
	return td
}

func spanID(trace, i int) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint32(id[:4], uint32(trace)+1)
	binary.BigEndian.PutUint32(id[4:], uint32(i)+1)
	return id
}

// v2Trace is spec V2's trace: six events in s0, then one in s1 (knob on).
func v2Trace(n int) ptrace.Traces {
	return stoveTrace(n, "", step{tool: "look"}, step{tool: "look"}, step{tool: "look"}, step{tool: "look"},
		step{tool: "look"}, step{tool: "look"}, step{tool: "turn_on_stove"})
}

func newTestProcessor(t testing.TB, cfg *Config, set processor.Settings) (*probProcessor, *consumertest.TracesSink) {
	t.Helper()
	sink := new(consumertest.TracesSink)
	p, err := NewFactory().CreateTraces(context.Background(), set, cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return p.(*probProcessor), sink
}

func nopSettings() processor.Settings { return processortest.NewNopSettings(metadata.Type) }

func feed(t testing.TB, p *probProcessor, tds ...ptrace.Traces) int {
	t.Helper()
	n := 0
	for _, td := range tds {
		n += td.SpanCount()
		if err := p.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

func shutdown(t testing.TB, p *probProcessor) {
	t.Helper()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func spanCount(sink *consumertest.TracesSink) int {
	n := 0
	for _, td := range sink.AllTraces() {
		n += td.SpanCount()
	}
	return n
}

// annotations lists probguard's evaluation events the sink received, as
// "span-name label state p_safe", in span start order.
func annotations(sink *consumertest.TracesSink) []string {
	type row struct {
		start pcommon.Timestamp
		text  string
	}
	var rows []row
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, span := range ss.Spans().All() {
					for _, ev := range span.Events().All() {
						a := ev.Attributes().AsRaw()
						if ev.Name() != assertion.EvaluationEvent || a[assertion.AttrCheck] != "probguard" {
							continue
						}
						text := fmt.Sprintf("%s %s %s", span.Name(), a[assertion.AttrScoreLabel], a["agentguard.state"])
						if ps, ok := a["agentguard.p_safe"].(float64); ok {
							text += fmt.Sprintf(" %.4f", ps)
						}
						if v, ok := span.Attributes().Get(assertion.AttrViolation); ok && v.Bool() {
							text += " violation"
						}
						rows = append(rows, row{span.StartTimestamp(), text})
					}
				}
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(a.start, b.start) })
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.text
	}
	return out
}

// splitAfter cuts a one-scope trace in two: its first k spans, and the rest.
func splitAfter(td ptrace.Traces, k int) (first, rest ptrace.Traces) {
	first, rest = ptrace.NewTraces(), ptrace.NewTraces()
	for i, dst := range []ptrace.Traces{first, rest} {
		td.ResourceSpans().CopyTo(dst.ResourceSpans())
		j := 0
		dst.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(ptrace.Span) bool {
			keep := (j < k) == (i == 0)
			j++
			return !keep
		})
	}
	return first, rest
}
