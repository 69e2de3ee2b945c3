// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
)

// processorConfig is how a processor embeds Config.
type processorConfig struct {
	Config `mapstructure:",squash"`
	Other  string `mapstructure:"other"`
}

func decode(t *testing.T, raw map[string]any) (processorConfig, error) {
	t.Helper()
	var cfg processorConfig
	err := confmap.NewFromStringMap(raw).Unmarshal(&cfg)
	return cfg, err
}

// Both forms decode, at the top and nested in set and reset.
func TestDecodeForms(t *testing.T) {
	cfg, err := decode(t, map[string]any{
		"other": "kept",
		"predicates": []any{
			map[string]any{"name": "sayHello", "tool": "say_hello"},
			map[string]any{"name": "xferToGreeting", "transfer_to": "greeting_agent"},
			map[string]any{"name": "custom", "condition": `span.name == "x"`},
			map[string]any{"name": "inGreeting",
				"set":   map[string]any{"transfer_to": "greeting_agent"},
				"reset": `span.attributes["gen_ai.tool.name"] == "say_goodbye"`},
		},
		"events":     `span.attributes["gen_ai.operation.name"] == "execute_tool"`,
		"error_mode": "silent",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := processorConfig{Other: "kept", Config: Config{
		Predicates: []Named{
			{Name: "sayHello", Predicate: Predicate{Tool: "say_hello"}},
			{Name: "xferToGreeting", Predicate: Predicate{TransferTo: "greeting_agent"}},
			{Name: "custom", Predicate: Predicate{Condition: `span.name == "x"`}},
			{Name: "inGreeting", Predicate: Predicate{
				Set:   &Predicate{TransferTo: "greeting_agent"},
				Reset: &Predicate{Condition: `span.attributes["gen_ai.tool.name"] == "say_goodbye"`}}},
		},
		Events:    &Predicate{Condition: `span.attributes["gen_ai.operation.name"] == "execute_tool"`},
		ErrorMode: ottl.SilentError,
	}}
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", cfg, want)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	// The agent shorthand and failed decode, at any depth.
	cfg, err = decode(t, map[string]any{"predicates": []any{
		map[string]any{"name": "greetingRuns", "agent": "greeting_agent"},
		map[string]any{"name": "helloFailed", "tool": "say_hello", "failed": true},
		map[string]any{"name": "xfer", "transfer_to": "a", "failed": false},
		map[string]any{"name": "inGreeting", "set": map[string]any{"agent": "greeting_agent"},
			"reset": map[string]any{"tool": "t", "failed": nil}},
	}})
	yes, no := true, false
	wantPredicates := List{
		{Name: "greetingRuns", Predicate: Predicate{Agent: "greeting_agent"}},
		{Name: "helloFailed", Predicate: Predicate{Tool: "say_hello", Failed: &yes}},
		{Name: "xfer", Predicate: Predicate{TransferTo: "a", Failed: &no}},
		{Name: "inGreeting", Predicate: Predicate{Set: &Predicate{Agent: "greeting_agent"}, Reset: &Predicate{Tool: "t"}}},
	}
	if err != nil || !reflect.DeepEqual(cfg.Predicates, wantPredicates) {
		t.Fatalf("decoded %+v, %v", cfg.Predicates, err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	// The map form of events decodes as well.
	cfg, err = decode(t, map[string]any{"events": map[string]any{"tool": "say_hello"}})
	if err != nil || cfg.Events == nil || cfg.Events.Tool != "say_hello" {
		t.Fatalf("events map form: %+v, %v", cfg.Events, err)
	}
}

// Decoding errors name the predicate and say what is valid.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		entry any
		want  string
	}{
		{map[string]any{"name": "x", "tol": "say_hello"},
			`predicate "x": unknown key "tol": valid keys are condition, tool, transfer_to, agent, failed, args, result, capture, set, reset, optional`},
		{map[string]any{"name": "x", "tool": "t", "optional": "maybe"},
			`predicate "x": optional: must be true or false, got string maybe`},
		{map[string]any{"name": "x", "set": map[string]any{"tools": "a"}, "reset": "true"},
			`predicate "x": set: unknown key "tools"`},
		{map[string]any{"name": "x", "tool": 3},
			`predicate "x": tool: must be a string, got int`},
		{map[string]any{"name": "x", "tool": "t", "failed": "yes"},
			`predicate "x": failed: must be true or false, got string yes`},
		{map[string]any{"name": "x", "set": []any{"a"}, "reset": "true"},
			`predicate "x": set: must be an OTTL condition (a string) or a map, got []interface {}`},
		{map[string]any{"name": 7, "tool": "a"},
			`predicate name: must be a string, got int`},
		{map[string]any{"tol": "a"},
			`predicate: unknown key "tol"`},
	}
	for _, tt := range tests {
		_, err := decode(t, map[string]any{"predicates": []any{tt.entry}})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want %q", tt.entry, err, tt.want)
		}
	}
}

// Every shape error of Validate, each naming the predicate.
func TestValidateErrors(t *testing.T) {
	p := func(name string, pr Predicate) Named { return Named{Name: name, Predicate: pr} }
	tool := Predicate{Tool: "t"}
	yes := true
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Predicates: []Named{p("", tool)}}, "predicates[0]: name is required"},
		{Config{Predicates: []Named{p("a", tool), p("a", tool)}}, `predicate "a": declared twice`},
		{Config{Predicates: []Named{p("ok", tool)}}, `name "ok" is reserved`},
		{Config{Predicates: []Named{p("say hello", tool)}}, `name "say hello": must be an identifier`},
		{Config{Predicates: []Named{p("1st", tool)}}, `name "1st": must be an identifier`},
		{Config{Predicates: []Named{p("a", Predicate{})}}, `predicate "a": empty: give an OTTL condition or one of tool, transfer_to, agent, set/reset`},
		{Config{Predicates: []Named{p("a", Predicate{Condition: "true", Tool: "t"})}},
			`predicate "a": give either an OTTL condition or a shorthand, not both (got [condition tool])`},
		{Config{Predicates: []Named{p("a", Predicate{Tool: "t", TransferTo: "x"})}},
			`predicate "a": give exactly one shorthand, got [tool transfer_to]`},
		{Config{Predicates: []Named{p("a", Predicate{Tool: "t", Set: &tool, Reset: &tool})}},
			`predicate "a": give exactly one shorthand, got [tool set/reset]`},
		{Config{Predicates: []Named{p("a", Predicate{Set: &tool})}}, `predicate "a": a latched predicate needs both set and reset`},
		{Config{Predicates: []Named{p("a", Predicate{Agent: "x", Tool: "t"})}}, `predicate "a": give exactly one shorthand, got [tool agent]`},
		{Config{Predicates: []Named{p("a", Predicate{Agent: "x", Failed: &yes})}},
			`predicate "a": failed: only narrows tool or transfer_to (got agent)`},
		{Config{Predicates: []Named{p("a", Predicate{Condition: "true", Failed: &yes})}},
			`predicate "a": failed: only narrows tool or transfer_to (got condition)`},
		{Config{Predicates: []Named{p("a", Predicate{Failed: &yes})}}, `predicate "a": empty`},
		{Config{Predicates: []Named{p("a", Predicate{Set: &tool, Reset: &Predicate{}})}}, `predicate "a": reset: empty`},
		{Config{Predicates: []Named{p("a", Predicate{Set: &Predicate{Tool: "t", Condition: "true"}, Reset: &tool})}},
			`predicate "a": set: give either an OTTL condition or a shorthand, not both`},
		{Config{Events: &Predicate{Set: &tool, Reset: &tool}}, "events: cannot be latched"},
		{Config{Events: &Predicate{}}, "events: empty"},
		{Config{ErrorMode: ottl.PropagateError}, `error_mode "propagate": valid values are "ignore" and "silent"`},
		{tooMany(65, false), "predicates need 65 condition bits, at most 64"},
		{tooMany(30, true), "predicates need 90 condition bits, at most 64"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v\nwant %q", err, tt.want)
		}
	}
	if err := tooMany(64, false).Validate(); err != nil {
		t.Errorf("64 predicates: %v", err)
	}
	if err := tooMany(21, true).Validate(); err != nil {
		t.Errorf("21 latched predicates (63 bits): %v", err)
	}
}

func tooMany(n int, latched bool) Config {
	var cfg Config
	for i := range n {
		pr := Predicate{Tool: fmt.Sprint("t", i)}
		if latched {
			pr = Predicate{Set: &Predicate{Tool: "a"}, Reset: &Predicate{Tool: "b"}}
		}
		cfg.Predicates = append(cfg.Predicates, Named{Name: fmt.Sprint("p", i), Predicate: pr})
	}
	return cfg
}

// 64 predicates compile and each lands on its own bit, the last included.
func TestSixtyFourPredicates(t *testing.T) {
	s := mustCompile(t, tooMany(64, false), nil)
	rs, ss, sp := handBuilt("execute_tool t63", "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "t63")
	latch := s.NewLatch()
	if ok, sig := s.Eval(rs, ss, sp); !ok || latch.Step(sig) != 1<<63 {
		t.Fatalf("event %v, bits %b", ok, latch.Step(sig))
	}
}

// The config follows the collector's conventions (snake_case tags).
func TestConfigStruct(t *testing.T) {
	if err := componenttest.CheckConfigStruct(Config{}); err != nil {
		t.Fatal(err)
	}
}

// FuzzDecode: any YAML-shaped value (here from JSON) decodes to a predicate
// or an error, never a panic; what decodes and validates also compiles or
// fails with an error naming the predicate, and a decoded map form carries
// no key the decoder does not know.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"tool": "say_hello"}`, `"span.name == \"x\""`, `{"set": {"transfer_to": "a"}, "reset": "true"}`,
		`{"set": {"set": "true", "reset": "false"}, "reset": {"tool": "t"}}`, `{"tol": 1}`, `[1]`, `null`, `{"condition": "span.name =="}`,
		`{"agent": "greeting_agent"}`, `{"tool": "t", "failed": true}`, `{"agent": "a", "failed": false}`, `{"failed": 1}`} {
		f.Add(s)
	}
	tel := componenttest.NewNopTelemetrySettings()
	f.Fuzz(func(t *testing.T, src string) {
		var raw any
		if json.Unmarshal([]byte(src), &raw) != nil {
			return
		}
		p, err := decodePredicate(raw)
		if err != nil {
			return
		}
		cfg := Config{Predicates: []Named{{Name: "fuzzed", Predicate: p}}}
		if cfg.Validate() != nil {
			return
		}
		if _, err := Compile(cfg, Settings{Telemetry: tel}); err != nil && !strings.Contains(err.Error(), `predicate "fuzzed"`) {
			t.Fatalf("compile error without the name: %v", err)
		}
	})
}
