// SPDX-License-Identifier: Apache-2.0

package events

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// captureConfig: a transfer binds its target; a transfer to the agent that
// already has it is a self-handoff, whatever the agents are called. A
// weather call binds its city; its report must be about that city.
func captureConfig(t *testing.T) predicate.Config {
	var cfg predicate.Config
	err := confmap.NewFromStringMap(map[string]any{"predicates": []any{
		map[string]any{"name": "xfer", "tool": "transfer_to_agent", "capture": map[string]any{"agent": "args.agentName"}},
		map[string]any{"name": "xferSame", "tool": "transfer_to_agent", "args": map[string]any{"agentName": map[string]any{"captured": "agent"}}},
		map[string]any{"name": "other", "condition": `span.attributes["gen_ai.tool.name"] != "transfer_to_agent"`},
		map[string]any{"name": "askCity", "tool": "get_weather", "capture": map[string]any{"city": "args.city"}},
		map[string]any{"name": "cityReport", "tool": "get_weather", "result": map[string]any{"report": map[string]any{"contains_captured": "city"}}},
	}}).Unmarshal(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// run checks the recorded conversations with the capture assertions and
// returns each violation's explanation.
func run(t *testing.T, tds ...ptrace.Traces) []string {
	cfg := captureConfig(t)
	src, err := NewSource(cfg, "conversation", componenttest.NewNopTelemetrySettings())
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := assertion.Compile([]assertion.Config{
		{Name: "no_self_handoff", Never: "xfer + (xferSame | other * (1,10) + xferSame)"},
		{Name: "report_of_the_city_asked", Never: "askCity / ~cityReport"},
	}, src.Names(), 0)
	if err != nil {
		t.Fatal(err)
	}
	runner := assertion.NewRunner(compiled, assertion.Options{Captures: src.Captures()})
	groups, errs := src.Groups(tds)
	if errs.Count != 0 {
		t.Fatalf("OTTL errors: %v", errs.First)
	}
	var out []string
	for _, g := range groups {
		evs := make([]assertion.Event, len(g.Events))
		for i, ev := range g.Events {
			evs[i] = assertion.Event{Bits: ev.Bits, Time: int64(ev.Start), Name: predicate.Describe(ev.Span), Span: ev.Span, Captures: ev.Captures}
		}
		for _, v := range runner.Run(g.Key, evs, true) {
			if v.Violation {
				out = append(out, v.Explanation)
			}
		}
	}
	return out
}

// On Google ADK's real traces: the strong run passes; the weak run's
// greeting agent hands off to itself, which the capture of the first
// transfer's target catches, and the tree shows the agent bound.
func TestCapturesOnADKTraces(t *testing.T) {
	if got := run(t, fixtures.Traces(t, "adk-js/strong-run-01.json")); len(got) != 0 {
		t.Errorf("strong run: %d violations:\n%s", len(got), strings.Join(got, "\n"))
	}
	got := run(t, fixtures.Traces(t, "adk-js/weak-run-05.json"))
	if len(got) != 1 {
		t.Fatalf("weak run: %d violations, want 1:\n%s", len(got), strings.Join(got, "\n"))
	}
	for _, want := range []string{
		"no_self_handoff: never xfer + (xferSame | other * (1,10) + xferSame): MATCH from event 1 to 3",
		`+ (1/3) (0/`, `{agent: "greeting_agent"}`,
		`xfer (1/1) (0/0) 0 {agent: "greeting_agent"}`,
		"[xfer? xferSame?]",
	} {
		if !strings.Contains(got[0], want) {
			t.Errorf("explanation lacks %q:\n%s", want, got[0])
		}
	}
}

// A weather report about another city than the one asked for is caught;
// the reports of the recorded runs are about their cities.
func TestCityCaptureOnADKTraces(t *testing.T) {
	td := fixtures.Traces(t, "adk-js/weak-run-05.json")
	if got := run(t, td); len(got) != 1 || strings.Contains(got[0], "report_of_the_city_asked") {
		t.Fatalf("the recorded report is about London: %v", got)
	}
	td = fixtures.Traces(t, "adk-js/weak-run-05.json")
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if sp.Name() == "execute_tool get_weather" {
					sp.Attributes().PutStr("gcp.vertex.agent.tool_response", `{"status":"success","report":"It's sunny in Paris."}`)
				}
			}
		}
	}
	got := run(t, td)
	var found bool
	for _, x := range got {
		if strings.HasPrefix(x, "report_of_the_city_asked: never askCity / ~cityReport: MATCH from event 5 to 5") &&
			strings.Contains(x, `askCity (5/5)`) && strings.Contains(x, `{city: "London"}`) {
			found = true
		}
	}
	if !found {
		t.Errorf("the Paris report for London was not caught:\n%s", strings.Join(got, "\n"))
	}
}
