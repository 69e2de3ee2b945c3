// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// What an explanation lists for the events of a run, in each convention.
func TestDescribeOnFixtures(t *testing.T) {
	tests := []struct {
		file, weather string
		want          []string
	}{
		{"adk-js/weak-run-05.json", "weather_agent_v2", []string{"weather_agent_v2 takes control", "transfer to greeting_agent",
			"greeting_agent takes control", "tool say_hello", "transfer to greeting_agent", "greeting_agent takes control",
			"greeting_agent takes control", "transfer to weather_agent_v2", "weather_agent_v2 takes control", "tool get_weather"}},
		{"adk-js/parallel-goodbye.json", "weather_agent_v2", []string{"weather_agent_v2 takes control", "transfer to farewell_agent",
			"tool say_goodbye", "tool say_goodbye"}},
		{"adk-weather/adk-good-42-0.json", "weather_agent_v2", []string{"weather_agent_v2 takes control", "transfer to greeting_agent",
			"greeting_agent takes control", "tool say_hello", "transfer to weather_agent_v2", "weather_agent_v2 takes control"}},
		{"langgraph-openinference/strong-auto-handback.json", "weather_agent", []string{"weather_agent takes control",
			"transfer to greeting_agent", "greeting_agent takes control", "tool say_hello", "weather_agent takes control",
			"weather_agent takes control", "tool get_weather"}},
		{"openai-agents-openinference/strong.json", "weather_agent", []string{"weather_agent takes control",
			"handoff to greeting_agent", "greeting_agent takes control", "tool say_hello", "handoff to weather_agent",
			"weather_agent takes control", "weather_agent takes control", "tool get_weather"}},
		{"traceloop-langgraph/strong-explicit-handback.json", "weather_agent", []string{"transfer to greeting_agent",
			"tool say_hello", "transfer to weather_agent", "tool get_weather"}},
		{"household-langgraph/ep-004.json", "weather_agent", []string{"tool go_to", "tool turn_on_stove", "tool put_pot_on_stove",
			"tool add_pasta", "tool go_to", "tool answer_phone", "tool wait", "tool wait", "tool wait", "tool wait", "tool go_to",
			"tool check_pot", "tool turn_off_stove"}},
	}
	for _, tt := range tests {
		s := mustCompile(t, controlConfig(tt.weather), nil)
		var got []string
		for _, l := range spansInOrder(fixtures.Traces(t, tt.file)) {
			if ok, _ := s.Eval(l.rs, l.ss, l.span); ok {
				got = append(got, Describe(l.span))
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s:\n got %q\nwant %q", tt.file, got, tt.want)
		}
	}
}

// Shapes with no fixture.
func TestDescribeOnHandBuiltSpans(t *testing.T) {
	for _, tt := range []struct {
		span []string
		want string
	}{
		{[]string{"weather_agent → greeting_agent.handoff", "gen_ai.operation.name", "handoff",
			"gen_ai.handoff.to_agent", "greeting_agent"}, "handoff to greeting_agent"},
		{[]string{"get_weather.tool", "traceloop.span.kind", "tool", "traceloop.entity.name", "get_weather"}, "tool get_weather"},
		{[]string{"greeting_agent.agent", "traceloop.span.kind", "agent", "traceloop.entity.name", "greeting_agent"},
			"greeting_agent takes control"},
		{[]string{"handoff.tool", "traceloop.span.kind", "tool", "traceloop.entity.name", "handoff",
			"langgraph.command.goto_node", "weather_agent"}, "transfer to weather_agent"},
		{[]string{"transfer_back_to_weather_agent", "openinference.span.kind", "TOOL", "tool.name",
			"transfer_back_to_weather_agent"}, "transfer to weather_agent"},
		{[]string{"Delegate work to coworker", "openinference.span.kind", "TOOL", "tool.name", "Delegate work to coworker",
			"input.value", `{"task": "t", "coworker": "farewell_agent"}`}, "delegation to farewell_agent"},
		{[]string{"execute_tool transfer_to_agent", "gen_ai.tool.name", "transfer_to_agent", "gcp.vertex.agent.tool_call_args",
			`{}`}, "tool transfer_to_agent"},
		{[]string{"Greeter", "openinference.span.kind", "AGENT", "agent.name", "greeting_agent"}, "greeting_agent takes control"},
		{[]string{"invoke_agent agent", "gen_ai.operation.name", "invoke_agent", "gen_ai.agent.name", "agent",
			"gen_ai.provider.name", "langchain"}, "invoke_agent agent"},
		{[]string{"call_llm", "gen_ai.agent.name", "greeting_agent"}, "call_llm"},
		{[]string{"say_hello", "openinference.span.kind", "CHAIN", "tool.name", "say_hello"}, "say_hello"},
		{[]string{"execute_tool (merged)", "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "(merged tools)"},
			"execute_tool (merged)"},
	} {
		_, _, sp := handBuilt(tt.span[0], tt.span[1:]...)
		if got := Describe(sp); got != tt.want {
			t.Errorf("%q: Describe %q, want %q", tt.span, got, tt.want)
		}
	}
}

// On every span of every fixture, what Describe says is what the
// corresponding shorthand says: `tool X` where {tool: X} holds, and so on.
func TestDescribeAgreesWithShorthands(t *testing.T) {
	yes := true
	sets := map[string]*Set{}
	holds := func(p Predicate, l located) bool {
		key := p.Tool + "\x00" + p.TransferTo + "\x00" + p.Agent
		if p.Failed != nil {
			key += "\x00failed"
		}
		s, ok := sets[key]
		if !ok {
			s = mustCompile(t, Config{Events: &Predicate{Condition: "true"}, Predicates: []Named{{Name: "p", Predicate: p}}}, nil)
			sets[key] = s
		}
		_, sig := s.Eval(l.rs, l.ss, l.span)
		return sig == 1
	}
	files, err := filepath.Glob(filepath.Join(fixtures.Dir(), "*", "*.json"))
	if err != nil || len(files) < 15 {
		t.Fatalf("%d fixture files, %v", len(files), err)
	}
	described := map[string]int{}
	for _, f := range files {
		rel, _ := filepath.Rel(fixtures.Dir(), f)
		for _, l := range spansInOrder(fixtures.Traces(t, rel)) {
			d := Describe(l.span)
			p, failed, kind := shorthandOf(d)
			if kind == "" {
				if d != l.span.Name() {
					t.Fatalf("%s: Describe %q is neither a shorthand's nor the span's name", rel, d)
				}
				continue
			}
			described[kind]++
			if failed {
				p.Failed = &yes
			}
			if !holds(p, l) {
				t.Errorf("%s: Describe says %q, but %+v does not hold", rel, d, p)
			}
		}
	}
	if described["agent"] == 0 || described["tool"] == 0 || described["transfer"] == 0 {
		t.Fatalf("described %v: every kind should occur in the fixtures", described)
	}
}

// shorthandOf is the shorthand a description stands for.
func shorthandOf(d string) (p Predicate, failed bool, kind string) {
	d, failed = strings.CutSuffix(d, " (failed)")
	if agent, ok := strings.CutSuffix(d, " takes control"); ok {
		return Predicate{Agent: agent}, false, "agent"
	}
	for _, prefix := range []string{"transfer to ", "handoff to ", "delegation to "} {
		if to, ok := strings.CutPrefix(d, prefix); ok {
			return Predicate{TransferTo: to}, failed, "transfer"
		}
	}
	if tool, ok := strings.CutPrefix(d, "tool "); ok {
		return Predicate{Tool: tool}, failed, "tool"
	}
	return Predicate{}, false, ""
}

// Describe allocates the string it returns and nothing else; a span it
// names by its name costs nothing.
func TestDescribeAllocations(t *testing.T) {
	spans := map[string]ptrace.Span{}
	for _, l := range spansInOrder(fixtures.Traces(t, "traceloop-langgraph/strong-explicit-handback.json")) {
		spans[Describe(l.span)] = l.span
	}
	for _, l := range spansInOrder(fixtures.Traces(t, "langgraph-openinference/strong-auto-handback.json")) {
		spans[Describe(l.span)] = l.span
	}
	for _, tt := range []struct {
		describe string
		allocs   float64
	}{
		{"transfer to greeting_agent", 1}, {"tool say_hello", 1}, {"weather_agent takes control", 1}, {"RunnableSequence", 0},
	} {
		sp, ok := spans[tt.describe]
		if !ok {
			t.Fatalf("no span described %q", tt.describe)
		}
		if got := testing.AllocsPerRun(100, func() { Describe(sp) }); got > tt.allocs {
			t.Errorf("Describe (%s): %v allocations, want at most %v", tt.describe, got, tt.allocs)
		}
	}
}

func BenchmarkDescribe(b *testing.B) {
	spans := spansInOrder(fixtures.Traces(b, "traceloop-langgraph/weak-self-handoff.json"))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		Describe(spans[i%len(spans)].span)
		i++
	}
}
