// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Each meter form's mistakes are refused with the field, the value and the
// valid forms.
func TestMeterConfigErrors(t *testing.T) {
	for _, c := range []struct {
		pred map[string]any
		want string
	}{
		{map[string]any{"budget": map[string]any{"sum": "tokens"}}, "budget: max is required"},
		{map[string]any{"budget": map[string]any{"sum": "tokens", "max": -1}}, "budget: max: want a number of at least 0"},
		{map[string]any{"budget": map[string]any{"max": 5}}, "give exactly one of sum, count and max_of"},
		{map[string]any{"budget": map[string]any{"sum": "tokens", "count": "tool_calls", "max": 5}}, "got sum and count"},
		{map[string]any{"budget": map[string]any{"sum": "tool_calls", "max": 5}}, "tool_calls is counted (count: tool_calls)"},
		{map[string]any{"budget": map[string]any{"sum": "tokens", "max": 5, "per": "user"}}, `per "user": valid values are "tool" and "agent"`},
		{map[string]any{"budget": map[string]any{"sum": "tokens", "max": 5, "limit": 3}}, `budget: unknown key "limit"`},
		{map[string]any{"budget": "tokens"}, "budget: want a map {sum|count|max_of: QUANTITY"},
		{map[string]any{"repeats": map[string]any{"n": 1}}, "repeats: n is required, at least 2"},
		{map[string]any{"repeats": map[string]any{"n": 3, "within": 2}}, "within 2 is less than n 3"},
		{map[string]any{"repeats": map[string]any{"n": 3, "key": []any{"args"}}}, "valid keys are [tool, args], [tool, result] and [tool]"},
		{map[string]any{"repeats": map[string]any{"n": 2.5}}, "repeats: n: want a whole number from 1 to 1000"},
		{map[string]any{"no_progress": map[string]any{"k": 1}}, "no_progress: k is required, at least 2"},
		{map[string]any{"no_progress": map[string]any{"n": 3}}, `no_progress: unknown key "n": the valid key is k`},
		{map[string]any{"tool": "x", "repeats": map[string]any{"n": 2}}, "give exactly one shorthand, got [tool repeats]"},
		{map[string]any{"flows": map[string]any{"from": "read_file", "to": "send.args"}}, `flows: from "read_file": want TOOL.args or TOOL.result`},
		{map[string]any{"flows": map[string]any{"from": "read_file.result"}}, "flows: from and to are required"},
		{map[string]any{"flows": map[string]any{"from": "a.result", "to": "b.args", "detect": "secret"}}, `flows: detect: unknown detector "secret"`},
		{map[string]any{"flows": map[string]any{"from": "a.result", "to": "b.args", "min_length": 0}}, "flows: min_length: want a whole number"},
		{map[string]any{"set": map[string]any{"budget": map[string]any{"sum": "tokens", "max": 1}}, "reset": "true"}, "set and reset cannot be budget"},
	} {
		pred := c.pred
		pred["name"] = "m"
		cfg, err := decode(t, map[string]any{"predicates": []any{pred}})
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.pred, err, c.want)
		}
	}
}

// A budget over an attribute no span carries is a suspect, with the
// numeric keys the spans did carry; token budgets read every convention.
func TestQuantityWatch(t *testing.T) {
	lits := map[string]Literal{
		"cost":   {Quantity: "gen_ai.usage.cost_usd"},
		"tokens": {Quantity: QuantityTokens},
		"calls":  {Quantity: QuantityToolCalls},
		"tool":   {Tool: true, Name: "x"},
	}
	w := NewQuantityWatch(lits)
	span := ptrace.NewSpan()
	span.Attributes().PutInt("llm.token_count.prompt", 3)
	span.Attributes().PutDouble("gen_ai.usage.cost", 0.5)
	w.Note(span)
	got := w.Suspects()
	if len(got) != 1 || got[0].Predicate != "cost" || strings.Join(got[0].Seen, ",") != "gen_ai.usage.cost,llm.token_count.prompt" {
		t.Errorf("suspects %+v, want cost alone, with the keys seen", got)
	}
	if NewQuantityWatch(map[string]Literal{"calls": lits["calls"]}) != nil {
		t.Error("a count of tool calls reads no attribute, yet it is watched")
	}
}
