// SPDX-License-Identifier: Apache-2.0

package sequence

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// ByConversation finds each framework's conversation key, although no event
// span carries it in ADK.
func TestConversationOnFixtures(t *testing.T) {
	tests := []struct{ file, group string }{
		{"adk-js/strong-run-01.json", "2b03fa05-03fd-4720-ac18-945c53575ffb"}, // gen_ai.conversation.id on invoke_agent
		{"adk-weather/adk-bad-43-1.json", "session-194eb3ef"},
		{"langgraph-openinference/weak-self-handoff.json", "conv-lg-openinference-weak-02"}, // session.id
		{"openai-agents-openinference/strong.json", "conv-oa-openinference-strong-01"},
		{"traceloop-langgraph-recorded/strong.json", "tl-strong-london"}, // traceloop.association.properties.session_id
	}
	for _, tt := range tests {
		traces := Split(fixtures.Traces(t, tt.file), adkTools, ByConversation)
		if len(traces) == 0 {
			t.Fatalf("%s: no traces", tt.file)
		}
		for _, tr := range traces {
			if !tr.GroupFound || tr.Group != tt.group {
				t.Errorf("%s: trace %v in group %q (found %v), want %q", tt.file, tr.ID, tr.Group, tr.GroupFound, tt.group)
			}
		}
	}
}

// The chain's first key found wins, whatever the span order; an empty value
// is absent.
func TestConversationChainOrder(t *testing.T) {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	span := func(trace byte, start pcommon.Timestamp, kv ...string) {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{trace})
		sp.SetSpanID(pcommon.SpanID{trace, byte(start)})
		sp.SetStartTimestamp(start)
		for i := 0; i+1 < len(kv); i += 2 {
			sp.Attributes().PutStr(kv[i], kv[i+1])
		}
	}
	span(1, 10, "gcp.vertex.agent.session_id", "adk-session")
	span(1, 20, "session.id", "session")
	span(1, 30, "gen_ai.conversation.id", "conversation")
	span(2, 10, "gen_ai.conversation.id", "", "gcp.vertex.agent.session_id", "adk-only")
	span(3, 10, "gen_ai.conversation.id", "")
	got := map[byte]string{}
	for _, tr := range Split(td, adkTools, ByConversation) {
		got[tr.ID[0]] = map[bool]string{true: tr.Group, false: "<none>"}[tr.GroupFound]
	}
	want := map[byte]string{1: "conversation", 2: "adk-only", 3: "<none>"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("trace %d: group %q, want %q", id, got[id], w)
		}
	}
	if !slices.Equal(ConversationKeys(), []string{"gen_ai.conversation.id", "session.id", "gcp.vertex.agent.session_id", "traceloop.association.properties.session_id"}) {
		t.Errorf("chain %v", ConversationKeys())
	}
}

// With the real predicate set: the paper's events of ADK's failing run, in
// order across its two traces, with a latch folded over the conversation.
func TestWithPredicateSet(t *testing.T) {
	set, err := predicate.Compile(predicate.Config{Predicates: []predicate.Named{
		{Name: "xferToGreeting", Predicate: predicate.Predicate{TransferTo: "greeting_agent"}},
		{Name: "inGreeting", Predicate: predicate.Predicate{
			Set: &predicate.Predicate{TransferTo: "greeting_agent"}, Reset: &predicate.Predicate{TransferTo: "weather_agent_v2"}}},
	}}, predicate.Settings{Telemetry: componenttest.NewNopTelemetrySettings()})
	if err != nil {
		t.Fatal(err)
	}
	classify := func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) (bool, uint64) {
		ok, sig := set.Eval(rs, ss, sp)
		return ok, uint64(sig)
	}
	traces := Split(fixtures.Traces(t, "adk-js/weak-run-05.json"), classify, ByConversation)
	if len(traces) != 2 || traces[0].Group != traces[1].Group {
		t.Fatalf("%d traces, groups %q", len(traces), []string{traces[0].Group, traces[len(traces)-1].Group})
	}
	events := Merge(traces[0].Events, traces[1].Events)
	latch := set.NewLatch()
	Fold(events, func(sig uint64) uint64 { return uint64(latch.Step(predicate.Signals(sig))) })
	var got []string
	for _, e := range events {
		got = append(got, e.Span.Name()+map[bool]string{true: " +latched", false: ""}[predicate.Bits(e.Bits).Has(1)])
	}
	want := []string{"execute_tool transfer_to_agent +latched", "execute_tool say_hello +latched",
		"execute_tool transfer_to_agent +latched", "execute_tool transfer_to_agent", "execute_tool get_weather"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
