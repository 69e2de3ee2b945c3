// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// controlConfig is the paper's predicates plus who takes control.
func controlConfig(weather string) Config {
	cfg := paperConfig(weather)
	cfg.Predicates = append(cfg.Predicates,
		Named{Name: "greetingRuns", Predicate: Predicate{Agent: "greeting_agent"}},
		Named{Name: "weatherRuns", Predicate: Predicate{Agent: weather}})
	return cfg
}

// Each agent run is one event, in every convention with an agent span, and
// the other events stay as they were (TestShorthandsOnFixtures).
func TestAgentOnFixtures(t *testing.T) {
	tests := []struct {
		file, weather string
		labels        []string
	}{
		// ADK: invoke_agent spans; turn 2 starts in the agent that had control.
		{"adk-js/strong-run-01.json", "weather_agent_v2", []string{"weatherRuns", "xferToGreeting", "greetingRuns", "sayHello",
			"xferToWeather", "weatherRuns", "weatherRuns", "getWeather"}},
		{"adk-js/weak-run-05.json", "weather_agent_v2", []string{"weatherRuns", "xferToGreeting", "greetingRuns", "sayHello",
			"xferToGreeting", "greetingRuns", "greetingRuns", "xferToWeather", "weatherRuns", "getWeather"}},
		{"adk-weather/adk-good-42-0.json", "weather_agent_v2", []string{"weatherRuns", "xferToGreeting", "greetingRuns", "sayHello",
			"xferToWeather", "weatherRuns"}},
		// LangGraph: one __start__ per run, although each agent node shows as
		// two nested identical spans. The automatic hand-back is the weather
		// agent's run after say_hello.
		{"langgraph-openinference/strong-auto-handback.json", "weather_agent", []string{"weatherRuns", "xferToGreeting",
			"greetingRuns", "sayHello", "weatherRuns", "weatherRuns", "getWeather"}},
		{"langgraph-openinference/strong-explicit-handback.json", "weather_agent", []string{"weatherRuns", "xferToGreeting",
			"greetingRuns", "sayHello", "xferToWeather", "weatherRuns", "weatherRuns", "getWeather"}},
		// The self-handoff runs the greeting agent again and, beside it, the
		// supervisor's hand-back.
		{"langgraph-openinference/weak-self-handoff.json", "weather_agent", []string{"weatherRuns", "xferToGreeting",
			"greetingRuns", "sayHello", "xferToGreeting", "greetingRuns", "weatherRuns", "sayHello", "weatherRuns",
			"weatherRuns", "getWeather"}},
		// OpenAI Agents: an AGENT span per activation.
		{"openai-agents-openinference/weak-self-handoff.json", "weather_agent", []string{"weatherRuns", "xferToGreeting",
			"greetingRuns", "sayHello", "xferToGreeting", "greetingRuns", "sayHello", "greetingRuns", "xferToWeather",
			"weatherRuns", "getWeather"}},
		// Traceloop's LangChain instrumentation has no span marking a run
		// once: no control events, the rest unchanged.
		{"traceloop-langgraph/strong-auto-handback.json", "weather_agent", []string{"xferToGreeting", "sayHello", "getWeather"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := mustCompile(t, controlConfig(tt.weather), func(p string, err error) { t.Errorf("%s: %v", p, err) })
			var got []string
			for _, ev := range events(t, s, fixtures.Traces(t, tt.file)) {
				got = append(got, labels(s, ev.bits))
			}
			if !slices.Equal(got, tt.labels) {
				t.Errorf("got  %q\nwant %q", got, tt.labels)
			}
		})
	}
}

// What counts as taking control, on shapes without a fixture and on the
// near misses.
func TestAgentOnHandBuiltSpans(t *testing.T) {
	ns := func(ns string) string {
		return `{"langgraph_step":0,"langgraph_node":"__start__","langgraph_checkpoint_ns":"` + ns + `"}`
	}
	tests := []struct {
		shape string
		span  []string // name, then attribute key/value pairs
		want  string   // "-" when the span is no event
	}{
		{"genai invoke_agent", []string{"invoke_agent greeting_agent", "gen_ai.operation.name", "invoke_agent",
			"gen_ai.agent.name", "greeting_agent"}, "greetingRuns"},
		{"genai invoke_agent, name only", []string{"invoke_agent greeting_agent"}, "greetingRuns"},
		{"adk call_llm of the agent", []string{"call_llm", "gen_ai.agent.name", "greeting_agent"}, "-"},
		{"traceloop langchain chain", []string{"invoke_agent greeting_agent", "gen_ai.operation.name", "invoke_agent",
			"gen_ai.agent.name", "greeting_agent", "gen_ai.provider.name", "langchain"}, "-"},
		{"openinference agent.name", []string{"Greeter", "openinference.span.kind", "AGENT", "agent.name", "greeting_agent"}, "greetingRuns"},
		{"openinference graph.node.id", []string{"Greeter", "openinference.span.kind", "AGENT", "graph.node.id", "greeting_agent"}, "greetingRuns"},
		{"openinference chain of that name", []string{"greeting_agent", "openinference.span.kind", "CHAIN"}, "-"},
		{"openllmetry agent", []string{"greeting_agent.agent", "traceloop.span.kind", "agent", "traceloop.entity.name", "greeting_agent"}, "greetingRuns"},
		{"openllmetry workflow", []string{"greeting_agent.workflow", "traceloop.span.kind", "workflow", "traceloop.entity.name", "greeting_agent"}, "-"},
		{"langgraph run", []string{"__start__", "metadata", ns("greeting_agent:a1|__start__:b2")}, "greetingRuns"},
		{"langgraph run, deeper", []string{"__start__", "metadata", ns("team:t|greeting_agent:a1|__start__:b2")}, "greetingRuns"},
		{"langgraph top-level graph", []string{"__start__", "metadata", ns("__start__:b2")}, "-"},
		{"langgraph inner node of the agent", []string{"__start__", "metadata", ns("greeting_agent:a1|agent:c3|__start__:b2")}, "-"},
		{"langgraph agent as a suffix", []string{"__start__", "metadata", ns("my_greeting_agent:a1|__start__:b2")}, "-"},
		{"langgraph node span", []string{"greeting_agent", "openinference.span.kind", "CHAIN", "metadata",
			`{"langgraph_node":"greeting_agent","langgraph_checkpoint_ns":"greeting_agent:a1"}`}, "-"},
		{"langgraph other span", []string{"agent", "metadata", ns("greeting_agent:a1|__start__:b2")}, "-"},
	}
	cfg := Config{Predicates: []Named{{Name: "greetingRuns", Predicate: Predicate{Agent: "greeting_agent"}}}}
	for name, s := range map[string]*Set{"native": mustCompile(t, cfg, nil), "ottl": mustCompileOTTL(t, cfg)} {
		for _, tt := range tests {
			rs, ss, sp := handBuilt(tt.span[0], tt.span[1:]...)
			ok, sig := s.Eval(rs, ss, sp)
			got := "-"
			if ok {
				latch := s.NewLatch()
				got = labels(s, latch.Step(sig))
			}
			if got != tt.want {
				t.Errorf("%s, %s: got %q, want %q", name, tt.shape, got, tt.want)
			}
		}
	}
}

func mustCompileOTTL(t testing.TB, cfg Config) *Set {
	t.Helper()
	_, viaOTTL := pair(t, cfg)
	return viaOTTL
}

// An agent predicate makes events even under an events condition that
// selects nothing, and even when it only sets or resets a latch; without
// one, a span where no predicate holds is still no event.
func TestAgentSpansAreEvents(t *testing.T) {
	rs, ss, run := handBuilt("invoke_agent greeting_agent", "gen_ai.operation.name", "invoke_agent", "gen_ai.agent.name", "greeting_agent")
	_, _, other := handBuilt("call_llm")
	none := &Predicate{Condition: "false"}
	for _, tt := range []struct {
		name string
		cfg  Config
		want bool
	}{
		{"agent predicate", Config{Events: none, Predicates: []Named{{Name: "a", Predicate: Predicate{Agent: "greeting_agent"}}}}, true},
		{"agent in a latch", Config{Events: none, Predicates: []Named{{Name: "l", Predicate: Predicate{
			Set: &Predicate{Agent: "greeting_agent"}, Reset: &Predicate{Tool: "say_hello"}}}}}, true},
		{"another agent", Config{Events: none, Predicates: []Named{{Name: "a", Predicate: Predicate{Agent: "weather_agent"}}}}, false},
		{"no agent predicate", Config{Predicates: []Named{{Name: "t", Predicate: Predicate{Tool: "greeting_agent"}}}}, false},
	} {
		s := mustCompile(t, tt.cfg, nil)
		if ok, _ := s.Eval(rs, ss, run); ok != tt.want {
			t.Errorf("%s: event %v, want %v", tt.name, ok, tt.want)
		}
		if ok, _ := s.Eval(rs, ss, other); ok {
			t.Errorf("%s: call_llm is an event", tt.name)
		}
	}
	// A latch on who has control, over a real trace.
	cfg := paperConfig("weather_agent")
	cfg.Predicates = append(cfg.Predicates, Named{Name: "inGreeting", Predicate: Predicate{
		Set: &Predicate{Agent: "greeting_agent"}, Reset: &Predicate{Agent: "weather_agent"}}})
	s := mustCompile(t, cfg, nil)
	var got []string
	for _, ev := range events(t, s, fixtures.Traces(t, "langgraph-openinference/strong-auto-handback.json")) {
		got = append(got, labels(s, ev.bits))
	}
	want := []string{"", "xferToGreeting", "inGreeting", "sayHello+inGreeting", "", "", "getWeather"}
	if !slices.Equal(got, want) {
		t.Errorf("latched control: got %q, want %q", got, want)
	}
}

func TestAgentOTTL(t *testing.T) {
	got := AgentCondition("greeting_agent")
	for _, want := range []string{
		`span.attributes["gen_ai.agent.name"] == "greeting_agent"`,
		`span.name == "invoke_agent greeting_agent"`,
		`span.attributes["gen_ai.provider.name"] != "langchain"`,
		`span.attributes["openinference.span.kind"] == "AGENT"`,
		`span.name == "__start__" and IsMatch(span.attributes["metadata"], "\"langgraph_checkpoint_ns\"`,
		`span.attributes["traceloop.span.kind"] == "agent" and span.attributes["traceloop.entity.name"] == "greeting_agent"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("AgentCondition lacks %s:\n%s", want, got)
		}
	}
	// A name is a literal in the pattern, not a regexp.
	s := mustCompile(t, Config{Predicates: []Named{{Name: "a", Predicate: Predicate{Agent: "a.b"}}}}, nil)
	rs, ss, sp := handBuilt("__start__", "metadata", `{"langgraph_checkpoint_ns":"axb:1|__start__:2"}`)
	if ok, _ := s.Eval(rs, ss, sp); ok {
		t.Error("agent a.b matched node axb")
	}
}
