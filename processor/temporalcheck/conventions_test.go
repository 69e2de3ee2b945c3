// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// te1 over real OpenInference traces: LangGraph supervisor teams and the
// OpenAI Agents SDK, grouped by session.
func TestOpenInferenceTraces(t *testing.T) {
	for file, want := range map[string][]string{
		"langgraph-openinference/strong-explicit-handback.json": nil,
		// The supervisor's automatic hand-back makes no span: te1, which
		// demands an explicit transfer back, sees it missing.
		"langgraph-openinference/strong-auto-handback.json":  {"te1 failure 1/3 on get_weather"},
		"langgraph-openinference/weak-self-handoff.json":     {"te1 failure 1/3 on transfer_to_greeting_agent", "te1 failure 3/5 on get_weather"},
		"openai-agents-openinference/strong.json":            nil,
		"openai-agents-openinference/weak-self-handoff.json": {"te1 failure 1/3 on handoff to greeting_agent"},
	} {
		p, sink := newTestProcessor(t, "openinference", nil)
		n := feed(t, p, fixtures.Traces(t, file))
		shutdown(t, p)
		if got := verdictsOf(sink); !slices.Equal(got, want) || sink.SpanCount() != n {
			t.Errorf("%s: verdicts %v, want %v; %d of %d spans", file, got, want, sink.SpanCount(), n)
		}
	}
}

// openLLMetryTurn builds one user turn as OpenLLMetry (Traceloop) traces an
// OpenAI Agents team: a workflow root, tool spans named <tool>.tool with
// traceloop.span.kind = tool and gen_ai.operation.name = execute_tool, and
// handoff spans "<from> → <to>.handoff" with gen_ai.handoff.to_agent.
func openLLMetryTurn(td ptrace.Traces, trace byte, session string, start int64, steps ...[2]string) {
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "weather-team")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("opentelemetry.instrumentation.openai_agents")
	root := ss.Spans().AppendEmpty()
	root.SetTraceID(pcommon.TraceID{trace})
	root.SetSpanID(pcommon.SpanID{trace, 0})
	root.SetName("Agent workflow")
	root.Attributes().PutStr("traceloop.span.kind", "workflow")
	root.Attributes().PutStr("session.id", session)
	root.SetStartTimestamp(pcommon.Timestamp(start))
	for i, step := range steps {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{trace})
		sp.SetSpanID(pcommon.SpanID{trace, byte(i + 1)})
		sp.SetParentSpanID(root.SpanID())
		sp.SetStartTimestamp(pcommon.Timestamp(start + int64(i+1)*1e6))
		sp.SetEndTimestamp(pcommon.Timestamp(start + int64(i+1)*1e6 + 5e5))
		switch kind, name := step[0], step[1]; kind {
		case "tool":
			sp.SetName(name + ".tool")
			sp.Attributes().PutStr("traceloop.span.kind", "tool")
			sp.Attributes().PutStr("traceloop.entity.name", name)
			sp.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
		case "handoff":
			sp.SetName("agent → " + name + ".handoff")
			sp.Attributes().PutStr("gen_ai.operation.name", "handoff")
			sp.Attributes().PutStr("gen_ai.handoff.to_agent", name)
		}
	}
	root.SetEndTimestamp(pcommon.Timestamp(start + int64(len(steps)+1)*1e6))
}

// group_by: conversation finds each framework's own key: ADK's
// gen_ai.conversation.id, OpenInference's session.id.
func TestGroupByConversation(t *testing.T) {
	for file, want := range map[string][]string{
		"adk-js/weak-run-05.json":                        {"te1 failure 1/3 on execute_tool transfer_to_agent", "te1 failure 3/4 on execute_tool transfer_to_agent"},
		"langgraph-openinference/weak-self-handoff.json": {"te1 failure 1/3 on transfer_to_greeting_agent", "te1 failure 3/5 on get_weather"},
	} {
		name := "paper"
		if strings.HasPrefix(file, "langgraph") {
			name = "openinference"
		}
		p, sink := newTestProcessor(t, name, func(c *Config) { c.GroupBy = "conversation" })
		feed(t, p, fixtures.Traces(t, file))
		shutdown(t, p)
		if got := verdictsOf(sink); !slices.Equal(got, want) {
			t.Errorf("%s: verdicts %v, want %v", file, got, want)
		}
	}
}

func TestOpenLLMetryShapedSpans(t *testing.T) {
	td := ptrace.NewTraces()
	openLLMetryTurn(td, 1, "s-1", 1e12, [2]string{"handoff", "greeting_agent"}, [2]string{"tool", "say_hello"}, [2]string{"handoff", "greeting_agent"})
	openLLMetryTurn(td, 2, "s-1", 2e12, [2]string{"handoff", "weather_agent"}, [2]string{"tool", "get_weather"})
	p, sink := newTestProcessor(t, "openinference", nil)
	n := feed(t, p, td)
	shutdown(t, p)
	want := []string{"te1 failure 1/3 on agent → greeting_agent.handoff", "te1 failure 3/4 on agent → weather_agent.handoff"}
	if got := verdictsOf(sink); !slices.Equal(got, want) || sink.SpanCount() != n {
		t.Fatalf("verdicts %v, want %v; %d of %d spans", got, want, sink.SpanCount(), n)
	}
}
