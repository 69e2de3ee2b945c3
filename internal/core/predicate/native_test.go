// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// equivalenceConfig uses every shorthand, with names that occur in the
// fixtures and hand-built spans.
func equivalenceConfig() Config {
	cfg := paperConfig("weather_agent_v2")
	yes, no := true, false
	cfg.Predicates = append(cfg.Predicates,
		Named{Name: "xferToWeatherAgent", Predicate: Predicate{TransferTo: "weather_agent"}},
		Named{Name: "transferTool", Predicate: Predicate{Tool: "transfer_to_agent"}},
		Named{Name: "xferToStar", Predicate: Predicate{TransferTo: "a.+b"}},
		Named{Name: "greetingRuns", Predicate: Predicate{Agent: "greeting_agent"}},
		Named{Name: "weatherRuns", Predicate: Predicate{Agent: "weather_agent"}},
		Named{Name: "starRuns", Predicate: Predicate{Agent: "a.+b"}},
		Named{Name: "helloFailed", Predicate: Predicate{Tool: "say_hello", Failed: &yes}},
		Named{Name: "helloOK", Predicate: Predicate{Tool: "say_hello", Failed: &no}},
		Named{Name: "xferFailed", Predicate: Predicate{TransferTo: "greeting_agent", Failed: &yes}},
		Named{Name: "weatherFailed", Predicate: Predicate{Tool: "get_weather", Failed: &yes}})
	return cfg
}

// pair compiles cfg twice: shorthands native, and everything through OTTL.
func pair(t testing.TB, cfg Config) (native, viaOTTL *Set) {
	t.Helper()
	set := Settings{Telemetry: componenttest.NewNopTelemetrySettings()}
	native, err := compile(cfg, set, true)
	if err != nil {
		t.Fatal(err)
	}
	viaOTTL, err = compile(cfg, set, false)
	if err != nil {
		t.Fatal(err)
	}
	if !native.facts || native.ottl || viaOTTL.facts {
		t.Fatalf("native: facts %v ottl %v; OTTL: facts %v", native.facts, native.ottl, viaOTTL.facts)
	}
	return native, viaOTTL
}

// agree checks both sets say the same of the span, and returns the signals.
func agree(t testing.TB, native, viaOTTL *Set, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) Signals {
	t.Helper()
	ok1, sig1 := native.Eval(rs, ss, sp)
	ok2, sig2 := viaOTTL.Eval(rs, ss, sp)
	if ok1 != ok2 || sig1 != sig2 {
		t.Fatalf("span %q %v: native (%v, %b), OTTL (%v, %b)", sp.Name(), sp.Attributes().AsRaw(), ok1, sig1, ok2, sig2)
	}
	return sig1
}

// The native matchers agree with the generated OTTL on every fixture span.
func TestNativeAgreesWithOTTLOnFixtures(t *testing.T) {
	native, viaOTTL := pair(t, equivalenceConfig())
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "traces", "*", "*.json"))
	if err != nil || len(files) < 12 {
		t.Fatalf("%d fixture files, %v", len(files), err)
	}
	spans := 0
	for _, f := range files {
		rel, _ := filepath.Rel(filepath.Join("..", "..", "..", "testdata", "traces"), f)
		for _, l := range spansInOrder(fixtures.Traces(t, rel)) {
			agree(t, native, viaOTTL, l.rs, l.ss, l.span)
			spans++
		}
	}
	t.Logf("%d spans", spans)
}

// ... and on random spans over the attributes they read, with values of
// every type, near-miss JSON and duplicate keys.
func TestNativeAgreesWithOTTLOnRandomSpans(t *testing.T) {
	native, viaOTTL := pair(t, equivalenceConfig())
	r := rand.New(rand.NewPCG(1, 2))
	var seen Signals
	for range 50000 {
		rs, ss, sp := randomSpan(r)
		seen |= agree(t, native, viaOTTL, rs, ss, sp)
	}
	// Not vacuous: every predicate held somewhere.
	if want := Signals(lowBits(len(native.Names()))); seen != want {
		t.Fatalf("predicates that held: %b, want all %b", seen, want)
	}
}

var (
	keys = []string{"gen_ai.operation.name", "gen_ai.tool.name", "openinference.span.kind", "tool.name",
		"traceloop.span.kind", "traceloop.entity.name", "gen_ai.handoff.to_agent", "langgraph.command.goto_node",
		"gcp.vertex.agent.tool_call_args", "input.value", "gen_ai.tool.call.arguments", "traceloop.entity.input", "other",
		"traceloop.entity.output", "metadata", "gen_ai.agent.name", "gen_ai.provider.name", "graph.node.id", "agent.name"}
	words = []string{"execute_tool", "handoff", "TOOL", "tool", "CHAIN", "(merged tools)", "say_hello", "say_goodbye", "get_weather",
		"transfer_to_agent", "transfer_to_greeting_agent", "transfer_back_to_weather_agent_v2", "handoff_to_weather_agent",
		"Delegate work to coworker", "greeting_agent", "weather_agent", "weather_agent_v2", "farewell_agent", "a.+b", "axxb", "",
		"invoke_agent", "AGENT", "agent", "langchain", "task"}
	jsons = []string{`{"agent_name": "greeting_agent"}`, `{"agentName":"weather_agent_v2"}`, `{"agentname" :	"farewell_agent"}`,
		`{"agent_Name": "greeting_agentx"}`, `{"coworker": "weather_agent"}`, `{"task":"t","coworker":"a.+b"}`,
		`{"coworker":"axxb"}`, `"agent_name"agent_name": "greeting_agent"`, `{"agent_name": greeting_agent}`,
		`{"agent_name" "greeting_agent"}`, `not json`, `N/A`, `{}`,
		// LangGraph metadata: checkpoint namespaces.
		`{"langgraph_node":"__start__","langgraph_checkpoint_ns":"greeting_agent:1|__start__:2"}`,
		`{"langgraph_checkpoint_ns" : "t:0|weather_agent:1|__start__:2"}`, `{"langgraph_checkpoint_ns":"a.+b:1|__start__:2"}`,
		`{"langgraph_checkpoint_ns":"greeting_agent:1|agent:3|__start__:2"}`, `{"langgraph_checkpoint_ns":"greeting_agent:1"}`,
		`{"langgraph_checkpoint_ns":"axxb:1|__start__:2"}`, `{"langgraph_checkpoint_ns":"greeting_agent:1|__start__:2|x"}`,
		// Traceloop LangChain JS tool results: ToolMessages and Commands.
		toolMessagePrefix + `"status":"success","content":"hi","name":"say_hello"}}`,
		toolMessagePrefix + `"content":"{\"name\":\"say_hello\"}","name":"get_weather"}}`,
		` ` + toolMessagePrefix + `"name":"say_hello"}}`,
		`{"lg_name":"Command","update":{"messages":[{"name":"say_hello"}]},"goto":["greeting_agent"]}`,
		`{"update":{},"goto" : "weather_agent" } `, `{"goto":["greeting_agent","weather_agent"]}`,
		`{"goto":["a.+b"]}`, `{"goto":["greeting_agent"]}}`, `{"goto":[ "axxb" ]}`}
	names = []string{"execute_tool x", "handoff to greeting_agent", "handoff to weather_agent", "say_hello", "call_llm",
		"invoke_agent greeting_agent", "__start__", "greeting_agent", "a.+b", "execute_tool say_hello",
		"execute_tool transfer_to_agent", "execute_tool (merged)"}
)

func randomSpan(r *rand.Rand) (ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span) {
	rs := ptrace.NewResourceSpans()
	ss := rs.ScopeSpans().AppendEmpty()
	sp := ss.Spans().AppendEmpty()
	sp.SetName(names[r.IntN(len(names))])
	sp.Status().SetCode([]ptrace.StatusCode{ptrace.StatusCodeUnset, ptrace.StatusCodeOk, ptrace.StatusCodeError}[r.IntN(3)])
	attrs := sp.Attributes()
	for range r.IntN(6) {
		k := keys[r.IntN(len(keys))]
		v := attrs.PutEmpty(k)
		switch r.IntN(8) {
		case 0:
			v.SetInt(int64(r.IntN(3)))
		case 1:
			m := v.SetEmptyMap()
			m.PutStr(keys[8+r.IntN(2)], words[r.IntN(len(words))])
			m.PutStr([]string{"agent_name", "agentName", "coworker"}[r.IntN(3)], words[r.IntN(len(words))])
		case 2:
			v.SetEmptySlice().AppendEmpty().SetStr(words[r.IntN(len(words))])
		case 3, 4:
			v.SetStr(jsons[r.IntN(len(jsons))])
		default:
			v.SetStr(words[r.IntN(len(words))])
		}
	}
	return rs, ss, sp
}

// Duplicate keys (possible in data from a careless exporter): both ways read
// the first.
func TestNativeReadsTheFirstOfDuplicateKeys(t *testing.T) {
	native, viaOTTL := pair(t, equivalenceConfig())
	raw := `{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"x","attributes":[` +
		`{"key":"gen_ai.operation.name","value":{"stringValue":"execute_tool"}},` +
		`{"key":"gen_ai.tool.name","value":{"stringValue":"say_hello"}},` +
		`{"key":"gen_ai.tool.name","value":{"stringValue":"get_weather"}}]}]}]}]}`
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	rs := td.ResourceSpans().At(0)
	ss := rs.ScopeSpans().At(0)
	sp := ss.Spans().At(0)
	agree(t, native, viaOTTL, rs, ss, sp)
	if _, sig := native.Eval(rs, ss, sp); !Bits(sig).Has(3) || Bits(sig).Has(5) {
		t.Fatalf("signals %b: want sayHello only", sig)
	}
}

// FuzzJSONField: the hand-written scan matches exactly what the regexp in the
// generated OTTL matches.
func FuzzJSONField(f *testing.F) {
	for _, j := range jsons {
		f.Add(j, "greeting_agent")
	}
	f.Add(`"agent_name"agent_name": "a.+b"`, "a.+b")
	f.Add("{\"agentName\"\f:\n\"x\"}", "x")
	f.Fuzz(func(t *testing.T, s, value string) {
		for _, c := range []struct {
			fields  []string
			pattern string
		}{{agentFields, `agent_?[nN]ame`}, {coworkerField, `coworker`}} {
			re, err := regexp.Compile(`"` + c.pattern + `"\s*:\s*"` + regexp.QuoteMeta(value) + `"`)
			if err != nil {
				t.Skip("value is not valid UTF-8 for a pattern") // cannot occur for a YAML string
			}
			if got, want := jsonField(s, c.fields, value), re.MatchString(s); got != want {
				t.Fatalf("jsonField(%q, %q) = %v, regexp says %v", s, value, got, want)
			}
		}
	})
}
