// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures"
)

func failedConfig() Config {
	yes, no := true, false
	return Config{Predicates: []Named{
		{Name: "sayHello", Predicate: Predicate{Tool: "say_hello"}},
		{Name: "helloFailed", Predicate: Predicate{Tool: "say_hello", Failed: &yes}},
		{Name: "helloOK", Predicate: Predicate{Tool: "say_hello", Failed: &no}},
		{Name: "xferToGreeting", Predicate: Predicate{TransferTo: "greeting_agent"}},
		{Name: "xferFailed", Predicate: Predicate{TransferTo: "greeting_agent", Failed: &yes}},
		{Name: "xferOK", Predicate: Predicate{TransferTo: "greeting_agent", Failed: &no}},
		{Name: "transferFailed", Predicate: Predicate{Tool: "transfer_to_agent", Failed: &yes}},
	}}
}

// A failed call is an event that tool matches; failed narrows; a failed
// transfer is no transfer. Describe says the same. Native and OTTL agree.
func TestFailedCalls(t *testing.T) {
	adkArgs := "gcp.vertex.agent.tool_call_args"
	tests := []struct {
		shape    string
		status   ptrace.StatusCode
		span     []string // name, then attribute key/value pairs
		want     string   // "-" when the span is no event
		describe string
	}{
		// ADK for TypeScript: a tool that throws ends its span with its name alone.
		{"adk-js thrown tool", ptrace.StatusCodeUnset, []string{"execute_tool say_hello"}, "sayHello+helloFailed", "tool say_hello (failed)"},
		{"adk-js thrown transfer", ptrace.StatusCodeUnset, []string{"execute_tool transfer_to_agent"}, "transferFailed",
			"tool transfer_to_agent (failed)"},
		{"adk-js thrown unknown tool", ptrace.StatusCodeUnset, []string{"execute_tool lookup"}, "", "tool lookup (failed)"},
		{"adk-js thrown merged", ptrace.StatusCodeUnset, []string{"execute_tool (merged)"}, "-", "execute_tool (merged)"},
		{"adk transfer", ptrace.StatusCodeUnset, []string{"execute_tool transfer_to_agent", "gen_ai.operation.name", "execute_tool",
			"gen_ai.tool.name", "transfer_to_agent", adkArgs, `{"agent_name": "greeting_agent"}`}, "xferToGreeting+xferOK",
			"transfer to greeting_agent"},
		{"adk transfer, status error", ptrace.StatusCodeError, []string{"execute_tool transfer_to_agent", "gen_ai.operation.name",
			"execute_tool", "gen_ai.tool.name", "transfer_to_agent", adkArgs, `{"agentName":"greeting_agent"}`},
			"xferFailed+transferFailed", "transfer to greeting_agent (failed)"},
		{"openinference tool, status error", ptrace.StatusCodeError, []string{"say_hello", "openinference.span.kind", "TOOL",
			"tool.name", "say_hello"}, "sayHello+helloFailed", "tool say_hello (failed)"},
		{"openinference tool, ok", ptrace.StatusCodeOk, []string{"say_hello", "openinference.span.kind", "TOOL",
			"tool.name", "say_hello"}, "sayHello+helloOK", "tool say_hello"},
		{"langgraph transfer, status error", ptrace.StatusCodeError, []string{"transfer_to_greeting_agent",
			"openinference.span.kind", "TOOL", "tool.name", "transfer_to_greeting_agent"}, "xferFailed",
			"transfer to greeting_agent (failed)"},
		{"genai tool with attributes", ptrace.StatusCodeUnset, []string{"execute_tool say_hello", "gen_ai.operation.name", "execute_tool"},
			"sayHello+helloOK", "tool say_hello"},
		// GenAI semconv: error.type where the operation ended in an error.
		{"genai tool with error.type", ptrace.StatusCodeUnset, []string{"execute_tool say_hello", "gen_ai.operation.name", "execute_tool",
			"gen_ai.tool.name", "say_hello", "error.type", "timeout"}, "sayHello+helloFailed", "tool say_hello (failed)"},
		{"genai tool with an empty error.type", ptrace.StatusCodeUnset, []string{"execute_tool say_hello", "gen_ai.operation.name", "execute_tool",
			"gen_ai.tool.name", "say_hello", "error.type", ""}, "sayHello+helloOK", "tool say_hello"},
		{"adk transfer with error.type", ptrace.StatusCodeUnset, []string{"execute_tool transfer_to_agent", "gen_ai.operation.name",
			"execute_tool", "gen_ai.tool.name", "transfer_to_agent", adkArgs, `{"agent_name": "greeting_agent"}`, "error.type", "500"},
			"xferFailed+transferFailed", "transfer to greeting_agent (failed)"},
	}
	native, viaOTTL := pair(t, failedConfig())
	for _, tt := range tests {
		rs, ss, sp := handBuilt(tt.span[0], tt.span[1:]...)
		sp.Status().SetCode(tt.status)
		agree(t, native, viaOTTL, rs, ss, sp)
		ok, sig := native.Eval(rs, ss, sp)
		got := "-"
		if ok {
			latch := native.NewLatch()
			got = labels(native, latch.Step(sig))
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.shape, got, tt.want)
		}
		if d := Describe(sp); d != tt.describe {
			t.Errorf("%s: Describe %q, want %q", tt.shape, d, tt.describe)
		}
	}
}

func TestFailedOTTL(t *testing.T) {
	yes, no := true, false
	for _, tt := range []struct {
		p    Predicate
		want string
	}{
		{Predicate{Tool: "t"}, ToolCondition("t")},
		{Predicate{Tool: "t", Failed: &yes}, "(" + ToolCondition("t") + ") and " + FailedCondition},
		{Predicate{Tool: "t", Failed: &no}, "(" + ToolCondition("t") + ") and not " + FailedCondition},
		{Predicate{TransferTo: "a"}, "(" + transferAlternatives("a") + ") and not " + FailedCondition},
		{Predicate{TransferTo: "a", Failed: &no}, TransferCondition("a")},
		{Predicate{TransferTo: "a", Failed: &yes}, "(" + transferAlternatives("a") + ") and " + FailedCondition},
	} {
		if got := tt.p.OTTL(); got != tt.want {
			t.Errorf("%+v:\n got %s\nwant %s", tt.p, got, tt.want)
		}
	}
}

// Traceloop's LangChain JS instrumentation, recorded: the span of a tool
// that threw names no tool (execute_tool DynamicStructuredTool, status
// ERROR, no output); its LangGraph ToolNode's span, whose output is the
// ToolMessage of status error, names it. That span is the failed call's
// event, the nameless one none: one event, named, in its place.
func TestTraceloopFailedCallRecorded(t *testing.T) {
	yes, no := true, false
	cfg := Config{Predicates: []Named{
		{Name: "xferToGreeting", Predicate: Predicate{TransferTo: "greeting_agent"}},
		{Name: "xferToWeather", Predicate: Predicate{TransferTo: "weather_agent_v2"}},
		{Name: "sayHello", Predicate: Predicate{Tool: "say_hello"}},
		{Name: "getWeather", Predicate: Predicate{Tool: "get_weather"}},
		{Name: "weatherFailed", Predicate: Predicate{Tool: "get_weather", Failed: &yes}},
		{Name: "weatherOK", Predicate: Predicate{Tool: "get_weather", Failed: &no}},
	}}
	native, viaOTTL := pair(t, cfg)
	// A glob runs as its OTTL only.
	globs := mustCompile(t, Config{Predicates: []Named{{Name: "getAny", Predicate: Predicate{Tool: "get_*"}},
		{Name: "sayAny", Predicate: Predicate{Tool: "say_*"}}}}, nil)
	for _, tt := range []struct {
		file     string
		want     []string
		describe []string
	}{
		{"traceloop-langgraph-recorded/failed-get-weather.json",
			[]string{"xferToGreeting", "sayHello sayAny", "xferToWeather", "getWeather+weatherFailed getAny"},
			[]string{"transfer to greeting_agent", "tool say_hello", "transfer to weather_agent_v2", "tool get_weather (failed)"}},
		{"traceloop-langgraph-recorded/strong.json",
			[]string{"xferToGreeting", "sayHello sayAny", "xferToWeather", "getWeather+weatherOK getAny"},
			[]string{"transfer to greeting_agent", "tool say_hello", "transfer to weather_agent_v2", "tool get_weather"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			var got, described []string
			nameless := 0
			for _, l := range spansInOrder(fixtures.Traces(t, tt.file)) {
				sig := agree(t, native, viaOTTL, l.rs, l.ss, l.span)
				ok, _ := native.Eval(l.rs, l.ss, l.span)
				if l.span.Status().Code() == ptrace.StatusCodeError && l.span.Name() == "execute_tool DynamicStructuredTool" {
					nameless++
					if ok {
						t.Errorf("the nameless span of the failed call is an event")
					}
				}
				if ok {
					latch, globLatch := native.NewLatch(), globs.NewLatch()
					label := labels(native, latch.Step(sig))
					if _, gsig := globs.Eval(l.rs, l.ss, l.span); gsig != 0 {
						label += " " + labels(globs, globLatch.Step(gsig))
					}
					got = append(got, label)
					described = append(described, Describe(l.span))
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("events %q\nwant   %q", got, tt.want)
			}
			if !slices.Equal(described, tt.describe) {
				t.Errorf("described %q\nwant      %q", described, tt.describe)
			}
			if failed := strings.Contains(tt.file, "failed"); (nameless == 1) != failed {
				t.Errorf("%d nameless failed tool spans in the recording", nameless)
			}
		})
	}
}
