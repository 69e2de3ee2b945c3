// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
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

// A call key is equal where canonical JSON is: key order and 3 against
// 3.0 do not matter; a string "1" is not the number 1, and order inside a
// list does matter.
func TestHashValueIsCanonical(t *testing.T) {
	value := func(raw any) pcommon.Value {
		v := pcommon.NewValueEmpty()
		if err := v.FromRaw(raw); err != nil {
			t.Fatal(err)
		}
		return v
	}
	same := [][2]any{
		{map[string]any{"a": 1, "b": 2.0}, map[string]any{"b": 2, "a": 1.0}},
		{map[string]any{"x": []any{1, map[string]any{"c": true, "d": nil}}}, map[string]any{"x": []any{1.0, map[string]any{"d": nil, "c": true}}}},
	}
	differ := [][2]any{
		{map[string]any{"a": "1"}, map[string]any{"a": 1}},
		{[]any{1, 2}, []any{2, 1}},
		{map[string]any{"a": 1, "b": 2}, map[string]any{"a": 2, "b": 1}},
		{1.5, 1},
		{true, false},
		{"", nil},
	}
	for _, c := range same {
		if hashValue(0, value(c[0])) != hashValue(0, value(c[1])) {
			t.Errorf("%v and %v hash apart", c[0], c[1])
		}
		if string(canonical(value(c[0]))) != string(canonical(value(c[1]))) {
			t.Errorf("%v and %v: canonical JSON differs, the test is wrong", c[0], c[1])
		}
	}
	for _, c := range differ {
		if hashValue(0, value(c[0])) == hashValue(0, value(c[1])) {
			t.Errorf("%v and %v hash alike", c[0], c[1])
		}
	}
	call := value(map[string]any{"city": "Paris", "days": 3, "tags": []any{"a", 1.5}})
	if n := testing.AllocsPerRun(100, func() { hashValue(0, call) }); n != 0 {
		t.Errorf("%.0f allocations to hash a call's arguments, want none", n)
	}
}
