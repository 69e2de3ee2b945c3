// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// BenchmarkSetEval: the paper's six predicates and the default events
// condition over every span of ADK traces (events and non-events, in their
// real proportion); one op is one span. native is what Compile builds;
// ottl runs the same generated OTTL through OTTL, for comparison.
func BenchmarkSetEval(b *testing.B) {
	for _, run := range []struct {
		file   string
		native bool
	}{
		{"adk-js/strong-run-01.json", true}, {"adk-weather/adk-good-42-0.json", true},
		{"adk-js/strong-run-01.json", false}, {"adk-weather/adk-good-42-0.json", false},
	} {
		way := map[bool]string{true: "native/", false: "ottl/"}[run.native]
		b.Run(way+run.file, func(b *testing.B) {
			s, err := compile(paperConfig("weather_agent_v2"), Settings{Telemetry: componenttest.NewNopTelemetrySettings(),
				OnError: func(string, error) { b.Fatal("evaluation error") }}, run.native)
			if err != nil {
				b.Fatal(err)
			}
			file := run.file
			spans := spansInOrder(fixtures.Traces(b, file))
			latch := s.NewLatch()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				l := spans[i%len(spans)]
				if ok, sig := s.Eval(l.rs, l.ss, l.span); ok {
					latch.Step(sig)
				}
				i++
			}
		})
	}
}

// BenchmarkSetEvalAgents: the paper's predicates plus two agent predicates
// (controlConfig), whose matchers run at every span, over every span of a
// LangGraph conversation (whose __start__ spans carry the metadata JSON they
// read) and of its Traceloop shape. One op is one span.
func BenchmarkSetEvalAgents(b *testing.B) {
	for _, file := range []string{"langgraph-openinference/weak-self-handoff.json", "traceloop-langgraph/weak-self-handoff.json"} {
		b.Run(file, func(b *testing.B) {
			s := mustCompile(b, controlConfig("weather_agent"), func(string, error) { b.Fatal("evaluation error") })
			spans := spansInOrder(fixtures.Traces(b, file))
			latch := s.NewLatch()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				l := spans[i%len(spans)]
				if ok, sig := s.Eval(l.rs, l.ss, l.span); ok {
					latch.Step(sig)
				}
				i++
			}
		})
	}
}

// BenchmarkJSONField compares the two ways to read a transfer's target on an
// ADK transfer span: ParseJSON and an index, or IsMatch over the text (the
// way the shorthands do it).
func BenchmarkJSONField(b *testing.B) {
	for _, c := range []struct{ name, cond string }{
		{"ParseJSON", `span.attributes["gen_ai.tool.name"] == "transfer_to_agent" and ParseJSON(span.attributes["gcp.vertex.agent.tool_call_args"])["agent_name"] == "greeting_agent"`},
		{"IsMatch", `span.attributes["gen_ai.tool.name"] == "transfer_to_agent" and IsMatch(span.attributes["gcp.vertex.agent.tool_call_args"], "\"agent_?[nN]ame\"\\s*:\\s*\"greeting_agent\"")`},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := mustCompile(b, Config{Predicates: []Named{{Name: "x", Predicate: Predicate{Condition: c.cond}}}}, nil)
			rs, ss, sp := handBuilt("execute_tool transfer_to_agent", "gen_ai.operation.name", "execute_tool",
				"gen_ai.tool.name", "transfer_to_agent", "gcp.vertex.agent.tool_call_args", `{"agent_name": "greeting_agent"}`)
			b.ReportAllocs()
			for b.Loop() {
				if ok, sig := s.Eval(rs, ss, sp); !ok || sig != 1 {
					b.Fatal(ok, sig)
				}
			}
		})
	}
}

// BenchmarkSetEvalCaptures: the paper's predicates beside three that read
// the weather call's arguments and result (a regexp, a capture, a
// comparison with a capture), over every span of the ADK for TypeScript
// run; one op is one span, its captures read (EvalCaptured) as
// events.Source reads them. "paper" is the same loop without them.
func BenchmarkSetEvalCaptures(b *testing.B) {
	extra := []Named{
		{Name: "nyc", Predicate: Predicate{Tool: "get_weather", Args: Fields{mustField(b, "city", "^New York$")}}},
		{Name: "askCity", Predicate: Predicate{Tool: "get_weather", Capture: []Capture{{Name: "city", From: "args.city"}}}},
		{Name: "sameCity", Predicate: Predicate{Tool: "get_weather", Result: Fields{mustField(b, "report", map[string]any{"contains_captured": "city"})}}},
	}
	for _, tc := range []struct {
		name  string
		extra []Named
	}{{"paper", nil}, {"paper+args+captures", extra}} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := paperConfig("weather_agent_v2")
			cfg.Predicates = append(cfg.Predicates, tc.extra...)
			s := mustCompile(b, cfg, func(string, error) { b.Fatal("evaluation error") })
			spans := spansInOrder(fixtures.Traces(b, "adk-js/strong-run-01.json"))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				l := spans[i%len(spans)]
				s.EvalCaptured(l.rs, l.ss, l.span)
				i++
			}
		})
	}
}

func mustField(b *testing.B, path string, raw any) FieldMatch {
	f, err := decodeField(path, raw)
	if err != nil {
		b.Fatal(err)
	}
	return f
}
