// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl/contexts/ottlspan"

	"github.com/agentguard/agentguard/internal/core/texpr"
	"github.com/agentguard/agentguard/internal/fixtures"
)

func fieldsConfig(t *testing.T, preds ...map[string]any) Config {
	t.Helper()
	list := make([]any, len(preds))
	for i, p := range preds {
		list[i] = p
	}
	cfg, err := decode(t, map[string]any{"predicates": list})
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Config
}

// heldAt lists, per fixture event, the predicates that held.
func heldAt(t *testing.T, s *Set, file string) []string {
	var out []string
	for _, ev := range events(t, s, fixtures.Traces(t, file)) {
		out = append(out, labels(s, ev.bits))
	}
	return out
}

// Each convention's arguments and results, unwrapped as call.go says, on
// the real recorded traces.
func TestArgsAndResultsOnRealTraces(t *testing.T) {
	for _, tc := range []struct {
		file string
		pred map[string]any
		want string // the events (by position) where it held, as "+" for held and "." for not
	}{
		// ADK for TypeScript: JSON arguments and {status, report} results.
		{"adk-js/strong-run-01.json", map[string]any{"tool": "get_weather", "args": map[string]any{"city": "^New York$"},
			"result": map[string]any{"status": map[string]any{"equals": "success"}, "report": "sunny"}}, "...+"},
		{"adk-js/weak-run-05.json", map[string]any{"tool": "get_weather", "args": map[string]any{"city": "^New York$"}}, "....."},
		{"adk-js/weak-run-05.json", map[string]any{"tool": "get_weather", "args": map[string]any{"city": "London"}}, "....+"},
		{"adk-js/strong-run-01.json", map[string]any{"tool": "transfer_to_agent", "args": map[string]any{"agentName": "^weather"}}, "..+."},
		// Python ADK shape.
		{"adk-weather/adk-good-42-1.json", map[string]any{"tool": "get_weather", "args": map[string]any{"city": map[string]any{"equals": "New York"}}}, "+"},
		// OpenInference, LangGraph JS: a one-argument tool gets its argument bare;
		// the result is the ToolMessage's content inside {"output": ...}.
		{"langgraph-openinference/strong-explicit-handback.json", map[string]any{"tool": "get_weather",
			"args": map[string]any{"$": "^New York$"}, "result": map[string]any{"$": "sunny, 25"}}, "...+"},
		// ... which stands for any top-level field, so that args: {city: ...}
		// reads it as in the other conventions; a bare result has no field.
		{"langgraph-openinference/strong-explicit-handback.json", map[string]any{"tool": "get_weather",
			"args": map[string]any{"city": "^New York$"}}, "...+"},
		{"langgraph-openinference/strong-explicit-handback.json", map[string]any{"tool": "get_weather",
			"args": map[string]any{"city": "^London$"}}, "...."},
		{"langgraph-openinference/strong-explicit-handback.json", map[string]any{"tool": "get_weather",
			"args": map[string]any{"city.name": "New York"}}, "...."},
		{"langgraph-openinference/strong-explicit-handback.json", map[string]any{"tool": "get_weather",
			"result": map[string]any{"report": "sunny"}}, "...."},
		// OpenInference, OpenAI Agents: JSON arguments, a bare string result.
		{"openai-agents-openinference/strong.json", map[string]any{"tool": "get_weather",
			"args": map[string]any{"city": "New York"}, "result": map[string]any{"$": "^The weather"}}, "...+"},
		// OpenLLMetry, LangChain JS: {"args": ["New York"]}, the ToolMessage itself.
		{"traceloop-langgraph/strong-explicit-handback.json", map[string]any{"tool": "get_weather",
			"args": map[string]any{"$": "New York"}, "result": map[string]any{"$": "25°C"}}, "...+"},
		{"traceloop-langgraph/strong-explicit-handback.json", map[string]any{"tool": "get_weather",
			"args": map[string]any{"city": "^New York$"}}, "...+"},
		// The household tools' state: JSON in the ToolMessage's content.
		{"household-langgraph/ep-004.json", map[string]any{"tool": "answer_phone",
			"result": map[string]any{"stove_on": true, "room": "^living_room$", "minutes_away_with_stove_on": 5}}, ".....+......."},
		{"household-langgraph/ep-004.json", map[string]any{"tool": "wait", "args": map[string]any{"minutes": 3}}, "......+..+..."},
	} {
		pred := map[string]any{"name": "p"}
		for k, v := range tc.pred {
			pred[k] = v
		}
		s := mustCompile(t, fieldsConfig(t, pred), nil)
		var got strings.Builder
		for _, l := range heldAt(t, s, tc.file) {
			if l == "p" {
				got.WriteByte('+')
			} else {
				got.WriteByte('.')
			}
		}
		if got.String() != tc.want {
			t.Errorf("%s %v: held at %s, want %s", tc.file, tc.pred, got.String(), tc.want)
		}
	}
}

// Each JSON text a span holds is parsed once, however many predicates read
// it; a Set's memo serves them all.
func TestArgsParsedOncePerSpan(t *testing.T) {
	var preds []map[string]any
	for i, city := range []string{"New York", "London", "Paris", "^N", "York$"} {
		preds = append(preds, map[string]any{"name": "p" + string(rune('a'+i)), "tool": "get_weather",
			"args": map[string]any{"city": city}, "result": map[string]any{"status": "success"}})
	}
	preds = append(preds, map[string]any{"name": "cap", "tool": "get_weather", "capture": map[string]any{"city": "args.city"}})
	s := mustCompile(t, fieldsConfig(t, preds...), nil)
	parses := map[string]int{}
	miss := s.memo.parse
	s.memo.parse = func(ctx context.Context, tCtx *ottlspan.TransformContext, text string) (any, error) {
		parses[text]++
		return miss(ctx, tCtx, text)
	}
	for _, l := range spansInOrder(fixtures.Traces(t, "adk-js/strong-run-01.json")) {
		clear(parses)
		s.EvalCaptured(l.rs, l.ss, l.span)
		for text, n := range parses {
			if n != 1 {
				t.Errorf("%s: %q parsed %d times", l.span.Name(), text, n)
			}
		}
	}
}

// A city capture on the ADK weather traces: the capture predicate's values
// applied to dicts.
func TestCaptureOnRealTraces(t *testing.T) {
	cfg := fieldsConfig(t,
		map[string]any{"name": "askCity", "tool": "get_weather", "capture": map[string]any{"city": "args.city"}},
		map[string]any{"name": "sameCity", "tool": "get_weather", "args": map[string]any{"city": map[string]any{"captured": "city"}}},
		map[string]any{"name": "report", "tool": "get_weather", "result": map[string]any{"report": map[string]any{"contains_captured": "city"}}},
	)
	if got := cfg.Captures(); got != 0b111 {
		t.Fatalf("captures %03b", got)
	}
	s := mustCompile(t, cfg, nil)
	for _, l := range spansInOrder(fixtures.Traces(t, "adk-js/weak-run-05.json")) {
		ok, sig, c := s.EvalCaptured(l.rs, l.ss, l.span)
		if !ok || sig == 0 {
			if c != nil {
				t.Errorf("%s: captures without a capture predicate", l.span.Name())
			}
			continue
		}
		if sig != 0b111 || c == nil {
			t.Fatalf("%s: bits %03b, captures %v", l.span.Name(), sig, c)
		}
		holds, d := c.Apply(0, texpr.Dict{})
		if !holds || d.String() != `{city: "London"}` {
			t.Errorf("askCity: %v %s", holds, d)
		}
		for i, want := range []bool{true, false} {
			in := texpr.Dict{}.With("city", []texpr.Value{`"London"`, `"New York"`}[i])
			if holds, _ := c.Apply(1, in); holds != want {
				t.Errorf("sameCity under %s: %v", in, holds)
			}
			if holds, _ := c.Apply(2, in); holds != want {
				t.Errorf("report contains %s: %v", in, holds)
			}
		}
		if holds, _ := c.Apply(1, texpr.Dict{}); holds {
			t.Error("sameCity held with no city bound")
		}
	}
}

func TestFieldErrors(t *testing.T) {
	for _, tc := range []struct {
		pred map[string]any
		want string
	}{
		{map[string]any{"tool": "t", "args": map[string]any{"url": "^(https"}}, `args: field "url": regexp "^(https": error parsing regexp`},
		{map[string]any{"tool": "t", "args": map[string]any{"url": map[string]any{"equal": "x"}}}, `args: field "url": unknown matcher "equal": valid are equals, matches, captured, contains_captured`},
		{map[string]any{"tool": "t", "args": map[string]any{"url": map[string]any{"equals": 1, "matches": "x"}}}, `args: field "url": an explicit matcher has exactly one of`},
		{map[string]any{"tool": "t", "result": map[string]any{"a..b": 1}}, `result: field "a..b": a field is a path of keys`},
		{map[string]any{"tool": "t", "result": map[string]any{"tags": []any{"a"}}}, `result: field "tags": a list [a]: write {equals: [...]}`},
		{map[string]any{"tool": "t", "args": "city"}, `args: must be a map from field to matcher, got string city`},
		{map[string]any{"tool": "t", "args": map[string]any{"c": map[string]any{"captured": "9x"}}}, `args: field "c": captured: must be a capture name (an identifier), got 9x`},
		{map[string]any{"tool": "t", "capture": map[string]any{"city": "input.city"}}, `capture: city: "input.city": must start with args or result`},
		{map[string]any{"tool": "t", "capture": map[string]any{"city": 3}}, `capture: city: must be args.FIELD or result.FIELD, got int 3`},
		{map[string]any{"tool": "t", "capture": map[string]any{"9": "args.x"}}, `capture: name "9"`},
		{map[string]any{"transfer_to": "a", "args": map[string]any{"x": 1}}, `args, result and capture only narrow tool (got transfer_to)`},
		{map[string]any{"tool": "t", "args": map[string]any{"c": map[string]any{"captured": "city"}}}, `field "c" compares with "city", which no predicate captures`},
		{map[string]any{"tool": "t", "capture": map[string]any{"city": "args.c"}, "args": map[string]any{"c": map[string]any{"captured": "city"}}},
			`field "c" compares with "city", which only this predicate captures; it binds only where its comparisons hold, so it can never hold`},
		{map[string]any{"set": map[string]any{"tool": "t", "capture": map[string]any{"c": "args.c"}}, "reset": map[string]any{"tool": "u"}}, `a latched predicate's set and reset cannot capture`},
	} {
		pred := map[string]any{"name": "p"}
		for k, v := range tc.pred {
			pred[k] = v
		}
		cfg, err := decode(t, map[string]any{"predicates": []any{pred}})
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to contain %q", tc.pred, err, tc.want)
		}
	}
}

func TestCanonical(t *testing.T) {
	for raw, want := range map[any]texpr.Value{
		"New York": `"New York"`, 3: "3", 3.0: "3", 2.5: "2.5", true: "true", nil: "null", "a<b": `"a<b"`,
	} {
		if got := canonicalRaw(raw); got != want {
			t.Errorf("%v: %s, want %s", raw, got, want)
		}
	}
	if got := canonicalRaw(map[string]any{"b": 1.0, "a": []any{"x", 2}}); got != `{"a":["x",2],"b":1}` {
		t.Errorf("object: %s", got)
	}
}

// FuzzFieldMatcher: any matcher a user can write decodes or fails with an
// error naming its field, and what decodes prints back in a form that
// decodes to the same matcher.
func FuzzFieldMatcher(f *testing.F) {
	for _, s := range []string{"^https://", "(", "city", "a.b", "$", "", "a..b", "0"} {
		f.Add(s, s, uint8(0))
	}
	f.Add("city", "city", uint8(2))
	f.Add("x", "9", uint8(3))
	f.Fuzz(func(t *testing.T, path, value string, kind uint8) {
		var raw any
		switch kind % 6 {
		case 0:
			raw = value
		case 1:
			raw = map[string]any{"equals": value}
		case 2:
			raw = map[string]any{"captured": value}
		case 3:
			raw = map[string]any{"contains_captured": value}
		case 4:
			raw = map[string]any{"matches": value}
		case 5:
			raw = float64(len(value))
		}
		fs, err := decodeFields("args", map[string]any{path: raw})
		if err != nil {
			if !strings.Contains(err.Error(), "args: field "+strconv.Quote(path)) {
				t.Fatalf("%q %v: error %q does not name the field", path, raw, err)
			}
			return
		}
		if len(fs) != 1 || fs[0].Path != path {
			t.Fatalf("%q: decoded %v", path, fs)
		}
		if fs[0].Kind == FieldEquals && fs[0].Equals == "" {
			t.Fatalf("%q: empty canonical value", value)
		}
	})
}

// FuzzCaptureSource: a capture's source decodes or fails naming the capture.
func FuzzCaptureSource(f *testing.F) {
	for _, s := range []string{"args.city", "result", "result.a.0.b", "input.x", "args.", "args..x", ""} {
		f.Add("city", s)
	}
	f.Fuzz(func(t *testing.T, name, from string) {
		cs, err := decodeCaptures(map[string]any{name: from})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "capture: ") {
				t.Fatalf("%q: %q: error %q", name, from, err)
			}
			return
		}
		result, path, err := splitSource(cs[0].From)
		if err != nil || (path != "$" && validPath(path) != nil) || result != strings.HasPrefix(from, "result") {
			t.Fatalf("%q decoded, then split as %v %q %v", from, result, path, err)
		}
	})
}
