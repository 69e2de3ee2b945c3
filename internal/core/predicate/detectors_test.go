// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
)

// The detectors reach predicates as a field matcher of args and result, in
// any convention, and as the OTTL converter Detect over any attribute (an
// absent one holds nothing, without an evaluation error).
func TestDetectorsInPredicates(t *testing.T) {
	cfg, err := decode(t, map[string]any{"predicates": []any{
		map[string]any{"name": "keyInBody", "tool": "send_email", "args": map[string]any{"body": map[string]any{"detect": "api_key"}}},
		map[string]any{"name": "cardAnywhere", "tool": "send_email", "args": map[string]any{"$": map[string]any{"detect": "card_number"}}},
		map[string]any{"name": "emailInPrompt", "condition": `Detect(span.attributes["gen_ai.prompt"], "email")`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	errs := 0
	set := mustCompile(t, cfg.Config, func(string, error) { errs++ })
	const key = "sk-EXAMPLEi1rLkgObmLmCqT3BlbkFJ6pxKDUzhmPl4Pzo08pfd"
	for _, c := range []struct {
		name string
		span []string
		want Signals
	}{
		{"a key in the body (GenAI)", []string{"execute_tool send_email", "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "send_email",
			"gen_ai.tool.call.arguments", `{"to":"x","body":"use ` + key + `"}`}, 0b001},
		{"a card number in the subject (OpenInference)", []string{"send_email", "openinference.span.kind", "TOOL", "tool.name", "send_email",
			"input.value", `{"subject":"card 4111 1111 1111 1111","body":"hi"}`}, 0b010},
		{"a Luhn-failing number", []string{"send_email", "openinference.span.kind", "TOOL", "tool.name", "send_email",
			"input.value", `{"subject":"order 4111 1111 1111 1112"}`}, 0},
		{"an email in a tool span's prompt attribute", []string{"execute_tool send_email", "gen_ai.operation.name", "execute_tool",
			"gen_ai.tool.name", "other", "gen_ai.prompt", "write to jane.doe@example.org"}, 0b100},
	} {
		ok, sig := set.Eval(handBuilt(c.span[0], c.span[1:]...))
		if !ok || sig != c.want {
			t.Errorf("%s: event %v, signals %03b, want %03b", c.name, ok, sig, c.want)
		}
	}
	if errs != 0 {
		t.Errorf("%d evaluation errors: an absent attribute is no error", errs)
	}
	for _, bad := range []map[string]any{
		{"name": "x", "tool": "t", "args": map[string]any{"b": map[string]any{"detect": "card_numbr"}}},
		{"name": "x", "condition": `Detect(span.attributes["a"], "card_numbr")`},
	} {
		cfg, err := decode(t, map[string]any{"predicates": []any{bad}})
		if err == nil {
			_, err = Compile(cfg.Config, Settings{Telemetry: componenttest.NewNopTelemetrySettings()})
		}
		if err == nil || !strings.Contains(err.Error(), `unknown detector "card_numbr"; did you mean card_number?`) {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

// Numeric comparisons of a field: lt, le, gt, ge, on a number or a string
// holding one; anything else (absent, a word, a boolean) does not hold.
func TestFieldComparisons(t *testing.T) {
	cfg, err := decode(t, map[string]any{"predicates": []any{
		map[string]any{"name": "longAway", "tool": "go_to", "result": map[string]any{"minutes_away": map[string]any{"ge": 7}}},
		map[string]any{"name": "shortAway", "tool": "go_to", "result": map[string]any{"minutes_away": map[string]any{"lt": 2.5}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	set := mustCompile(t, cfg.Config, nil)
	for result, want := range map[string]Signals{
		`{"minutes_away": 7}`: 0b01, `{"minutes_away": 12.5}`: 0b01, `{"minutes_away": "8"}`: 0b01,
		`{"minutes_away": 2}`: 0b10, `{"minutes_away": 6.99}`: 0, `{"minutes_away": true}`: 0, `{"minutes_away": "soon"}`: 0, `{}`: 0,
	} {
		_, sig := set.Eval(handBuilt("execute_tool go_to", "gen_ai.operation.name", "execute_tool", "gen_ai.tool.name", "go_to",
			"gcp.vertex.agent.tool_response", result))
		if sig != want {
			t.Errorf("%s: signals %02b, want %02b", result, sig, want)
		}
	}
	if _, err := decode(t, map[string]any{"predicates": []any{map[string]any{"name": "x", "tool": "t",
		"result": map[string]any{"n": map[string]any{"ge": "seven"}}}}}); err == nil || !strings.Contains(err.Error(), "ge: must be a number") {
		t.Errorf("a bound that is no number: %v", err)
	}
}
