// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// paperConfig is the weather team's predicates; the weather agent is
// weather_agent_v2 in ADK and weather_agent in the LangGraph and OpenAI
// Agents teams.
func paperConfig(weather string) Config {
	return Config{Predicates: []Named{
		{Name: "xferToGreeting", Predicate: Predicate{TransferTo: "greeting_agent"}},
		{Name: "xferToWeather", Predicate: Predicate{TransferTo: weather}},
		{Name: "xferToFarewell", Predicate: Predicate{TransferTo: "farewell_agent"}},
		{Name: "sayHello", Predicate: Predicate{Tool: "say_hello"}},
		{Name: "sayGoodbye", Predicate: Predicate{Tool: "say_goodbye"}},
		{Name: "getWeather", Predicate: Predicate{Tool: "get_weather"}},
	}}
}

// Every fixture: the default events condition picks exactly the tool and
// handoff spans, in order, and each shorthand holds exactly where it should.
func TestShorthandsOnFixtures(t *testing.T) {
	tests := []struct {
		file, weather string
		names, labels []string
	}{
		{"adk-weather/adk-good-42-0.json", "weather_agent_v2",
			[]string{"execute_tool transfer_to_agent", "execute_tool say_hello", "execute_tool transfer_to_agent"},
			[]string{"xferToGreeting", "sayHello", "xferToWeather"}},
		{"adk-weather/adk-good-42-1.json", "weather_agent_v2",
			[]string{"execute_tool get_weather"}, []string{"getWeather"}},
		{"adk-weather/adk-bad-43-0.json", "weather_agent_v2",
			[]string{"execute_tool transfer_to_agent", "execute_tool say_hello", "execute_tool transfer_to_agent"},
			[]string{"xferToGreeting", "sayHello", "xferToGreeting"}},
		{"adk-weather/adk-bad-43-1.json", "weather_agent_v2",
			[]string{"execute_tool transfer_to_agent", "execute_tool get_weather"},
			[]string{"xferToWeather", "getWeather"}},
		{"adk-js/strong-run-01.json", "weather_agent_v2",
			[]string{"execute_tool transfer_to_agent", "execute_tool say_hello", "execute_tool transfer_to_agent", "execute_tool get_weather"},
			[]string{"xferToGreeting", "sayHello", "xferToWeather", "getWeather"}},
		{"adk-js/weak-run-05.json", "weather_agent_v2",
			[]string{"execute_tool transfer_to_agent", "execute_tool say_hello", "execute_tool transfer_to_agent",
				"execute_tool transfer_to_agent", "execute_tool get_weather"},
			[]string{"xferToGreeting", "sayHello", "xferToGreeting", "xferToWeather", "getWeather"}},
		{"adk-js/parallel-goodbye.json", "weather_agent_v2", // the (merged) span is not an event
			[]string{"execute_tool transfer_to_agent", "execute_tool say_goodbye", "execute_tool say_goodbye"},
			[]string{"xferToFarewell", "sayGoodbye", "sayGoodbye"}},
		{"langgraph-openinference/strong-auto-handback.json", "weather_agent",
			[]string{"transfer_to_greeting_agent", "say_hello", "get_weather"},
			[]string{"xferToGreeting", "sayHello", "getWeather"}},
		{"langgraph-openinference/strong-explicit-handback.json", "weather_agent",
			[]string{"transfer_to_greeting_agent", "say_hello", "transfer_to_weather_agent", "get_weather"},
			[]string{"xferToGreeting", "sayHello", "xferToWeather", "getWeather"}},
		{"langgraph-openinference/weak-self-handoff.json", "weather_agent",
			[]string{"transfer_to_greeting_agent", "say_hello", "transfer_to_greeting_agent", "say_hello", "get_weather"},
			[]string{"xferToGreeting", "sayHello", "xferToGreeting", "sayHello", "getWeather"}},
		{"openai-agents-openinference/strong.json", "weather_agent",
			[]string{"handoff to greeting_agent", "say_hello", "handoff to weather_agent", "get_weather"},
			[]string{"xferToGreeting", "sayHello", "xferToWeather", "getWeather"}},
		{"openai-agents-openinference/weak-self-handoff.json", "weather_agent",
			[]string{"handoff to greeting_agent", "say_hello", "handoff to greeting_agent", "say_hello", "handoff to weather_agent", "get_weather"},
			[]string{"xferToGreeting", "sayHello", "xferToGreeting", "sayHello", "xferToWeather", "getWeather"}},
		// Traceloop's LangChain JS tool spans all read the same; the tool is
		// in the ToolMessage, the handoff in the Command (hand-built).
		{"traceloop-langgraph/strong-explicit-handback.json", "weather_agent",
			[]string{tlTool, tlTool, tlTool, tlTool}, []string{"xferToGreeting", "sayHello", "xferToWeather", "getWeather"}},
		{"traceloop-langgraph/strong-auto-handback.json", "weather_agent",
			[]string{tlTool, tlTool, tlTool}, []string{"xferToGreeting", "sayHello", "getWeather"}},
		{"traceloop-langgraph/weak-self-handoff.json", "weather_agent",
			[]string{tlTool, tlTool, tlTool, tlTool, tlTool}, []string{"xferToGreeting", "sayHello", "xferToGreeting", "sayHello", "getWeather"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			errs := 0
			s := mustCompile(t, paperConfig(tt.weather), func(string, error) { errs++ })
			var names, got []string
			for _, ev := range events(t, s, fixtures.Traces(t, tt.file)) {
				names = append(names, ev.name)
				got = append(got, labels(s, ev.bits))
			}
			if !slices.Equal(names, tt.names) {
				t.Errorf("events\n got %q\nwant %q", names, tt.names)
			}
			if !slices.Equal(got, tt.labels) {
				t.Errorf("predicates\n got %q\nwant %q", got, tt.labels)
			}
			if errs != 0 {
				t.Errorf("%d evaluation errors on a well-formed fixture", errs)
			}
		})
	}
}

const tlTool = "execute_tool DynamicStructuredTool"

// attrs builds a span in a conventions' shape (one resource, one scope).
func handBuilt(name string, kv ...string) (ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span) {
	rs := ptrace.NewResourceSpans()
	ss := rs.ScopeSpans().AppendEmpty()
	sp := ss.Spans().AppendEmpty()
	sp.SetName(name)
	for i := 0; i+1 < len(kv); i += 2 {
		sp.Attributes().PutStr(kv[i], kv[i+1])
	}
	return rs, ss, sp
}

// Shapes with no fixture, written from the instrumentations' conventions.
func TestShorthandsOnHandBuiltSpans(t *testing.T) {
	tests := []struct {
		shape string
		span  []string // name, then attribute key/value pairs
		want  string   // "-" when the span is no event
	}{
		// OpenLLMetry tool span (traceloop SDK decorators, LangChain): kind tool, entity name.
		{"openllmetry tool", []string{"get_weather.tool", "traceloop.span.kind", "tool", "traceloop.entity.name", "get_weather"}, "getWeather"},
		// OpenLLMetry with GenAI semconv: execute_tool <tool>.
		{"openllmetry execute_tool", []string{"execute_tool say_hello", "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "say_hello"}, "sayHello"},
		// OpenLLMetry's OpenAI Agents instrumentation: `<from> → <to>.handoff`.
		{"openllmetry handoff", []string{"weather_agent → greeting_agent.handoff", "gen_ai.operation.name", "handoff",
			"gen_ai.handoff.from_agent", "weather_agent", "gen_ai.handoff.to_agent", "greeting_agent"}, "xferToGreeting"},
		// OpenLLMetry's LangGraph supervisor: the transfer tool as a tool span.
		{"openllmetry langgraph transfer", []string{"transfer_to_farewell_agent.tool", "traceloop.span.kind", "tool",
			"traceloop.entity.name", "transfer_to_farewell_agent"}, "xferToFarewell"},
		// OpenLLMetry's LangGraph: a tool span whose Command names the next node.
		{"openllmetry langgraph goto", []string{"handoff.tool", "traceloop.span.kind", "tool", "traceloop.entity.name", "handoff",
			"langgraph.command.goto_node", "weather_agent_v2"}, "xferToWeather"},
		// LangGraph supervisor's hand-back tool.
		{"langgraph transfer back", []string{"transfer_back_to_weather_agent_v2", "openinference.span.kind", "TOOL",
			"tool.name", "transfer_back_to_weather_agent_v2", "input.value", "{}"}, "xferToWeather"},
		// Python ADK traced by OpenInference: transfer_to_agent, args in input.value.
		{"adk openinference", []string{"transfer_to_agent", "openinference.span.kind", "TOOL", "tool.name", "transfer_to_agent",
			"input.value", `{"agent_name": "greeting_agent"}`}, "xferToGreeting"},
		// CrewAI traced by OpenInference: the delegation tool, coworker in the arguments.
		{"crewai openinference", []string{"Delegate work to coworker", "openinference.span.kind", "TOOL",
			"tool.name", "Delegate work to coworker",
			"input.value", `{"task": "greet the user", "context": "new user", "coworker": "greeting_agent"}`}, "xferToGreeting"},
		// CrewAI under GenAI semconv: arguments in gen_ai.tool.call.arguments.
		{"crewai genai", []string{"execute_tool Delegate work to coworker", "gen_ai.operation.name", "execute_tool",
			"gen_ai.tool.name", "Delegate work to coworker",
			"gen_ai.tool.call.arguments", `{"task": "say bye", "context": "", "coworker": "farewell_agent"}`}, "xferToFarewell"},
		// CrewAI under OpenLLMetry: traceloop.entity.input holds the arguments.
		{"crewai openllmetry", []string{"Delegate work to coworker.tool", "traceloop.span.kind", "tool",
			"traceloop.entity.name", "Delegate work to coworker",
			"traceloop.entity.input", `{"task": "t", "context": "c", "coworker": "weather_agent_v2"}`}, "xferToWeather"},
		// A tool of the same name in another kind of span is no tool call.
		{"openinference chain", []string{"say_hello", "openinference.span.kind", "CHAIN", "tool.name", "say_hello"}, "-"},
		{"genai chat", []string{"chat gpt-4o", "gen_ai.operation.name", "chat"}, "-"},
		{"adk merged", []string{"execute_tool (merged)", "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "(merged tools)",
			"gcp.vertex.agent.tool_call_args", "N/A"}, "-"},
		{"an unknown tool", []string{"execute_tool lookup", "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "lookup"}, ""},
		// A call its agent's hook refused (an OpenAI Agents tool guardrail's
		// rejected call, a redirected hand-off) did not run: no event.
		{"denied tool call", []string{"get_weather", "openinference.span.kind", "TOOL", "tool.name", "get_weather",
			"agentguard.decision", "deny"}, "-"},
		{"denied handoff", []string{"handoff to greeting_agent", "openinference.span.kind", "TOOL", "tool.name", "handoff_to_greeting_agent",
			"agentguard.decision", "deny"}, "-"},
		{"allowed tool call", []string{"get_weather", "openinference.span.kind", "TOOL", "tool.name", "get_weather",
			"agentguard.decision", "allow"}, "getWeather"},
	}
	errs := 0
	s := mustCompile(t, paperConfig("weather_agent_v2"), func(string, error) { errs++ })
	for _, tt := range tests {
		rs, ss, sp := handBuilt(tt.span[0], tt.span[1:]...)
		ok, sig := s.Eval(rs, ss, sp)
		got := "-"
		if ok {
			latch := s.NewLatch()
			got = labels(s, latch.Step(sig))
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.shape, got, tt.want)
		}
	}
	if errs != 0 {
		t.Errorf("%d evaluation errors", errs)
	}
}

// A latch holds from the transfer to the greeting agent until the transfer
// back; the other predicates stay per event.
func TestLatchedOnFixture(t *testing.T) {
	cfg := paperConfig("weather_agent_v2")
	cfg.Predicates = append(cfg.Predicates, Named{Name: "inGreeting", Predicate: Predicate{
		Set:   &Predicate{TransferTo: "greeting_agent"},
		Reset: &Predicate{Condition: `span.attributes["gen_ai.tool.name"] == "transfer_to_agent" and ParseJSON(span.attributes["gcp.vertex.agent.tool_call_args"])["agentName"] == "weather_agent_v2"`},
	}})
	s := mustCompile(t, cfg, func(p string, err error) { t.Errorf("%s: %v", p, err) })
	if !s.Stateful() {
		t.Fatal("a latched predicate makes the set stateful")
	}
	var got []string
	for _, ev := range events(t, s, fixtures.Traces(t, "adk-js/weak-run-05.json")) {
		got = append(got, labels(s, ev.bits))
	}
	want := []string{"xferToGreeting+inGreeting", "sayHello+inGreeting", "xferToGreeting+inGreeting", "xferToWeather", "getWeather"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if o := s.OTTL(6); !strings.HasPrefix(o, "latch(set: ((span.attributes[\"gen_ai.tool.name\"] == \"transfer_to_agent\"") || !strings.Contains(o, `; reset: span.attributes["gen_ai.tool.name"] == "transfer_to_agent" and ParseJSON(`) {
		t.Errorf("OTTL of the latch: %s", o)
	}
}

// Latch semantics over hand-made signals, nested latches included.
func TestLatchSemantics(t *testing.T) {
	cond := func(attr string) *Predicate {
		return &Predicate{Condition: `span.attributes["` + attr + `"] == true`}
	}
	cfg := Config{Predicates: []Named{
		{Name: "a", Predicate: *cond("a")},
		{Name: "ab", Predicate: Predicate{Set: cond("a"), Reset: cond("b")}},
		// holds from a c while ab holds, until a d
		{Name: "nested", Predicate: Predicate{
			Set:   &Predicate{Set: cond("c"), Reset: cond("a")},
			Reset: cond("d"),
		}},
	}, Events: &Predicate{Condition: "true"}}
	s := mustCompile(t, cfg, nil)
	steps := []struct {
		attrs string // which of a, b, c, d are true
		want  string
	}{
		{"", ""},
		{"a", "a+ab"},
		{"", "ab"},
		{"b", ""},
		{"ab", "a+ab"}, // set wins over reset at one event
		{"c", "ab+nested"},
		{"a", "a+ab+nested"}, // the inner latch resets; the outer holds
		{"", "ab+nested"},
		{"d", "ab"},
		{"b", ""},
	}
	latch := s.NewLatch()
	for i, st := range steps {
		rs, ss, sp := handBuilt("e")
		for _, c := range st.attrs {
			sp.Attributes().PutBool(string(c), true)
		}
		_, sig := s.Eval(rs, ss, sp)
		if got := labels(s, latch.Step(sig)); got != st.want {
			t.Fatalf("step %d (%q): got %q, want %q", i, st.attrs, got, st.want)
		}
	}
	latch.Reset()
	rs, ss, sp := handBuilt("e")
	if _, sig := s.Eval(rs, ss, sp); latch.Step(sig) != 0 {
		t.Fatal("Reset left a latch holding")
	}
}

// A transfer whose arguments are not JSON: a predicate that parses them is
// false there, and its error is counted under its name; the shorthands read
// the text without parsing it and do not fail; the span is still an event.
// With OnError the caller reports the errors and the Set logs nothing;
// without it, the Set logs each predicate's first failure once (none when
// silent).
func TestRuntimeErrorIsFalseAndCounted(t *testing.T) {
	for _, mode := range []ottl.ErrorMode{ottl.IgnoreError, ottl.SilentError} {
		for _, withOnError := range []bool{true, false} {
			core, logs := observer.New(zapcore.WarnLevel)
			tel := componenttest.NewNopTelemetrySettings()
			tel.Logger = zap.New(core)
			counted := map[string]int{}
			cfg := paperConfig("weather_agent_v2")
			cfg.Predicates = append(cfg.Predicates, Named{Name: "argsNameGreeting", Predicate: Predicate{
				Condition: `ParseJSON(span.attributes["gcp.vertex.agent.tool_call_args"])["agent_name"] == "greeting_agent"`}})
			cfg.ErrorMode = mode
			set := Settings{Telemetry: tel}
			if withOnError {
				set.OnError = func(p string, err error) {
					if err == nil {
						t.Error("OnError without an error")
					}
					counted[p]++
				}
			}
			s, err := Compile(cfg, set)
			if err != nil {
				t.Fatal(err)
			}
			rs, ss, sp := handBuilt("execute_tool transfer_to_agent", "gen_ai.operation.name", "execute_tool",
				"gen_ai.tool.name", "transfer_to_agent", "gcp.vertex.agent.tool_call_args", "{agent_name: greeting_agent")
			for range 3 {
				if ok, sig := s.Eval(rs, ss, sp); !ok || sig != 0 {
					t.Fatalf("%s: event %v, signals %b", mode, ok, sig)
				}
			}
			if withOnError && (len(counted) != 1 || counted["argsNameGreeting"] != 3) {
				t.Fatalf("%s: counted %v, want three errors of argsNameGreeting", mode, counted)
			}
			wantLogs := 0
			if mode == ottl.IgnoreError && !withOnError {
				wantLogs = 1
			}
			if logs.Len() != wantLogs {
				t.Fatalf("%s, OnError %v: %d log lines, want %d", mode, withOnError, logs.Len(), wantLogs)
			}
			if wantLogs == 1 && logs.All()[0].ContextMap()["predicate"] != "argsNameGreeting" {
				t.Fatalf("log %v", logs.All()[0].ContextMap())
			}
		}
	}
}

// An error in the events condition makes the span no event, counted as such.
func TestEventsErrorIsCounted(t *testing.T) {
	var owner string
	s := mustCompile(t, Config{Events: &Predicate{Condition: `ParseJSON(span.name)["x"] == 1`}, ErrorMode: ottl.SilentError},
		func(p string, _ error) { owner = p })
	rs, ss, sp := handBuilt("not json")
	if ok, _ := s.Eval(rs, ss, sp); ok || owner != EventsOwner {
		t.Fatalf("event %v, error owner %q", ok, owner)
	}
}

func TestCompileErrorsNameThePredicate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want []string
	}{
		{Config{Predicates: []Named{{Name: "broken", Predicate: Predicate{Condition: `span.attributes["x"] ==`}}}},
			[]string{`predicate "broken": `, `1:24: condition has invalid syntax`}},
		{Config{Predicates: []Named{{Name: "nopath", Predicate: Predicate{Condition: `attributes["x"] == "y"`}}}},
			[]string{`predicate "nopath": `, `attributes`}},
		{Config{Predicates: []Named{{Name: "l", Predicate: Predicate{Set: &Predicate{Tool: "t"}, Reset: &Predicate{Condition: "IsNotAFunction()"}}}}},
			[]string{`predicate "l": `, "IsNotAFunction"}},
		{Config{Events: &Predicate{Condition: "span.name =="}},
			[]string{`events condition: `}},
	}
	for _, tt := range tests {
		_, err := Compile(tt.cfg, Settings{Telemetry: componenttest.NewNopTelemetrySettings()})
		if err == nil {
			t.Errorf("%+v compiled", tt.cfg)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q lacks %q", err, w)
			}
		}
	}
}

func TestCompileRejectsInvalidConfig(t *testing.T) {
	_, err := Compile(Config{Predicates: []Named{{Name: ""}}}, Settings{Telemetry: componenttest.NewNopTelemetrySettings()})
	if err == nil || !strings.Contains(err.Error(), "name is required") {
		t.Fatalf("got %v", err)
	}
}

func TestGeneratedOTTL(t *testing.T) {
	s := mustCompile(t, paperConfig("weather_agent_v2"), nil)
	if got, want := s.OTTL(3), ToolCondition("say_hello"); got != want {
		t.Errorf("OTTL(3) = %s, want %s", got, want)
	}
	want := `span.attributes["gen_ai.tool.name"] == "say_hello"` +
		` or (span.attributes["tool.name"] == "say_hello" and span.attributes["openinference.span.kind"] == "TOOL")` +
		` or (span.attributes["traceloop.entity.name"] == "say_hello" and span.attributes["traceloop.span.kind"] == "tool")` +
		` or (span.name == "execute_tool say_hello" and span.attributes["gen_ai.tool.name"] == nil)` +
		` or (span.attributes["gen_ai.operation.name"] == "execute_tool" and IsMatch(span.attributes["traceloop.entity.output"],` +
		` "^\\{\"lc\":1,\"type\":\"constructor\",\"id\":\\[\"langchain_core\",\"messages\",\"ToolMessage\"\\],\"kwargs\":\\{(?s:.*)\"name\"\\s*:\\s*\"say_hello\""))`
	// A call that threw, under Traceloop's LangChain instrumentation: its
	// LangGraph ToolNode's span, with the ToolMessage of status error.
	toolMessage := `\\{\"lc\":1,\"type\":\"constructor\",\"id\":\\[\"langchain_core\",\"messages\",\"ToolMessage\"\\],\"kwargs\":\\{`
	want += ` or ((span.attributes["traceloop.span.kind"] == "workflow"` +
		` and IsMatch(span.attributes["traceloop.entity.output"], "^\\{\"messages\":\\[` + toolMessage + `")` +
		` and IsMatch(span.attributes["traceloop.entity.output"], "` + toolMessage + `\"status\":\"error\",\"content\":\""))` +
		` and IsMatch(span.attributes["traceloop.entity.output"], "` + toolMessage +
		`\"status\":\"error\",\"content\":\"(?:[^\"\\\\]|(?s:\\\\.))*\",\"name\":\"say_hello\""))`
	if got := ToolCondition("say_hello"); got != want {
		t.Errorf("tool OTTL:\n%s\nwant\n%s", got, want)
	}
	// Names are quoted as OTTL strings, so no name can break out of one.
	if got := ToolCondition(`a"b\c`); !strings.Contains(got, `== "a\"b\\c"`) {
		t.Errorf("quoting: %s", got)
	}
	s = mustCompile(t, Config{Predicates: []Named{{Name: "q", Predicate: Predicate{Tool: `a"b\c`}}}}, nil)
	rs, ss, sp := handBuilt("x", "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", `a"b\c`)
	if ok, sig := s.Eval(rs, ss, sp); !ok || sig != 1 {
		t.Errorf("quoted tool name: %v %b", ok, sig)
	}
	if !errors.Is(nil, nil) || s.Stateful() || !slices.Equal(s.Names(), []string{"q"}) {
		t.Errorf("names %v, stateful %v", s.Names(), s.Stateful())
	}
}

// A Set is shared by a processor's goroutines: Eval holds no state (run with
// -race).
func TestEvalConcurrently(t *testing.T) {
	cfg := paperConfig("weather_agent_v2")
	cfg.Predicates = append(cfg.Predicates, Named{Name: "viaOTTL", Predicate: Predicate{Condition: `IsMatch(span.name, "^execute_tool say_")`}})
	s := mustCompile(t, cfg, nil)
	spans := spansInOrder(fixtures.Traces(t, "adk-js/weak-run-05.json"))
	want := events(t, s, fixtures.Traces(t, "adk-js/weak-run-05.json"))
	done := make(chan []event)
	for range 4 {
		go func() {
			var got []event
			latch := s.NewLatch()
			for _, l := range spans {
				if ok, sig := s.Eval(l.rs, l.ss, l.span); ok {
					got = append(got, event{l.span.Name(), latch.Step(sig)})
				}
			}
			done <- got
		}()
	}
	for range 4 {
		if got := <-done; !slices.Equal(got, want) {
			t.Errorf("concurrent Eval: %v, want %v", got, want)
		}
	}
}

// A tool name with * or ? is a glob over the tool's name, in every
// convention; it holds nowhere else.
func TestToolGlobs(t *testing.T) {
	cfg := Config{Predicates: List{
		{Name: "getAny", Predicate: Predicate{Tool: "get_*"}},
		{Name: "helloish", Predicate: Predicate{Tool: "say_?ello"}},
		{Name: "failedGet", Predicate: Predicate{Tool: "get_*", Failed: new(true)}},
	}}
	s := mustCompile(t, cfg, nil)
	for _, tt := range []struct {
		shape string
		span  []string
		want  string
	}{
		{"genai", []string{"execute_tool get_weather", "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "get_weather"}, "getAny"},
		{"openinference", []string{"get_time", "openinference.span.kind", "TOOL", "tool.name", "get_time"}, "getAny"},
		{"openllmetry", []string{"say_hello.tool", "traceloop.span.kind", "tool", "traceloop.entity.name", "say_hello"}, "helloish"},
		{"adk failed, name only", []string{"execute_tool get_weather"}, "getAny+failedGet"},
		{"no match", []string{"execute_tool set_weather", "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "set_weather"}, ""},
		{"the glob is whole", []string{"execute_tool forget_it", "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "forget_it"}, ""},
	} {
		rs, ss, sp := handBuilt(tt.span[0], tt.span[1:]...)
		ok, sig := s.Eval(rs, ss, sp)
		got := "-"
		if ok {
			latch := s.NewLatch()
			got = labels(s, latch.Step(sig))
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.shape, got, tt.want)
		}
	}
}

// A transfer_to or agent glob matches where the names it matches would: a
// glob that stands for exactly one name (its first letter a ?) holds at
// the spans the name's own predicate holds at, on every fixture span and on
// random spans of every shape the shorthands read.
func TestAgentAndTransferGlobs(t *testing.T) {
	names := []string{"greeting_agent", "weather_agent", "weather_agent_v2", "farewell_agent"}
	var exact, glob Config
	for _, n := range names {
		g := "?" + n[1:]
		exact.Predicates = append(exact.Predicates,
			Named{Name: "to_" + n, Predicate: Predicate{TransferTo: n}}, Named{Name: "runs_" + n, Predicate: Predicate{Agent: n}})
		glob.Predicates = append(glob.Predicates,
			Named{Name: "to_" + n, Predicate: Predicate{TransferTo: g}}, Named{Name: "runs_" + n, Predicate: Predicate{Agent: g}})
	}
	e, g := mustCompile(t, exact, nil), mustCompile(t, glob, nil)
	var held Signals
	compare := func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) {
		ok1, sig1 := e.Eval(rs, ss, sp)
		ok2, sig2 := g.Eval(rs, ss, sp)
		if ok1 != ok2 || sig1 != sig2 {
			t.Fatalf("span %q %v: names (%v, %b), globs (%v, %b)", sp.Name(), sp.Attributes().AsRaw(), ok1, sig1, ok2, sig2)
		}
		held |= sig1
	}
	files, err := filepath.Glob(filepath.Join(fixtures.Dir(), "*", "*.json"))
	if err != nil || len(files) < 12 {
		t.Fatalf("%d fixture files, %v", len(files), err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(fixtures.Dir(), f)
		for _, l := range spansInOrder(fixtures.Traces(t, rel)) {
			compare(l.rs, l.ss, l.span)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		compare(randomSpan(r))
	}
	if held == 0 {
		t.Fatal("no predicate held anywhere: the comparison proves nothing")
	}
	// A glob over a family: every transfer to a weather agent, any version.
	family := mustCompile(t, Config{Predicates: List{{Name: "toWeather", Predicate: Predicate{TransferTo: "weather_agent*"}}}}, nil)
	for _, to := range []string{"weather_agent", "weather_agent_v2"} {
		rs, ss, sp := handBuilt("handoff to "+to, "openinference.span.kind", "TOOL", "tool.name", "handoff_to_"+to)
		if ok, sig := family.Eval(rs, ss, sp); !ok || sig != 1 {
			t.Errorf("handoff to %s: %v %b", to, ok, sig)
		}
	}
}

// Two Sets evaluating OTTL at the same time (a processor's workers) each
// get their own OTTL contexts from the pool: a context given back twice
// would be handed to both at once. Each goroutine's signals must be the
// ones the spans give one at a time.
func TestConcurrentSetsShareNoOTTLContext(t *testing.T) {
	cfg := Config{
		Predicates: List{
			{Name: "named", Predicate: Predicate{Condition: `resource.attributes["service.name"] == "svc" and span.attributes["n"] == "1"`}},
			{Name: "evenSpan", Predicate: Predicate{Condition: `span.attributes["n"] == "0"`}},
		},
		Events: &Predicate{Condition: `resource.attributes["service.name"] == "svc"`},
	}
	var spans [][3]any
	for i := range 200 {
		rs, ss, sp := handBuilt("s", "n", strconv.Itoa(i%2))
		rs.Resource().Attributes().PutStr("service.name", "svc")
		spans = append(spans, [3]any{rs, ss, sp})
	}
	want := func(i int) Signals { return Signals(1 << (1 - i%2)) }
	var wg sync.WaitGroup
	for range 4 {
		s := mustCompile(t, cfg, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 50 {
				for i, l := range spans {
					ok, sig := s.Eval(l[0].(ptrace.ResourceSpans), l[1].(ptrace.ScopeSpans), l[2].(ptrace.Span))
					if !ok || sig != want(i) {
						t.Errorf("round %d, span %d: %v %b, want %b", round, i, ok, sig, want(i))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
