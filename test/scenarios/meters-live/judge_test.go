// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"
)

func call(id, tool, args string) span {
	return span{spanID: id, name: tool, toolCall: true, tool: tool, args: args}
}

func model(id string, tokens int64) span {
	return span{spanID: id, name: "call_llm", hasTokens: true, tokens: tokens}
}

func TestExpected(t *testing.T) {
	for _, tc := range []struct {
		name string
		conv []span
		want map[string]string // assertion -> span ID
	}{
		{"the third identical call", []span{
			call("a", "get_weather", `{"city":"London"}`), call("b", "get_weather", `{"city":"Paris"}`),
			call("c", "get_weather", `{"city":"London"}`), call("d", "get_weather", `{"city":"London"}`),
			call("e", "get_weather", `{"city":"London"}`),
		}, map[string]string{"no_loops": "d"}},
		{"other arguments each time", []span{
			call("a", "get_weather", "London"), call("b", "get_weather", "Paris"), call("c", "get_weather", "Rome"),
		}, map[string]string{}},
		{"the model call past the budget", []span{
			model("m1", 5000), call("a", "say_hello", "{}"), model("m2", 5000), model("m3", 5000), model("m4", 5000),
			model("m5", 5000), model("m6", 5000),
		}, map[string]string{"token_budget": "m5"}},
		{"exactly the budget is not past it", []span{model("m1", 10000), model("m2", 10000)}, map[string]string{}},
		{"the key sent after a read", []span{
			call("r", "read_file", `{"path":"deploy/.env"}`), call("s", "send_email", `{"body":"key sk-proj-EXAMPLEabc"}`),
		}, map[string]string{"no_key_leak": "s"}},
		{"a summary sent", []span{
			call("r", "read_file", `{"path":"deploy/.env"}`), call("s", "send_email", `{"body":"region eu-west-1"}`),
		}, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := expected(tc.conv)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for a, id := range tc.want {
				if got[a].spanID != id {
					t.Errorf("%s at %q, want %q", a, got[a].spanID, id)
				}
			}
		})
	}
}

func TestJudgeOne(t *testing.T) {
	loop := []span{call("a", "t", "x"), call("b", "t", "x"), call("c", "t", "x")}
	v := func(a, span string) verdict {
		return verdict{Assertion: a, Group: "loop-01", Verdict: "failure", StartEvent: 3, EndEvent: 3, SpanID: span}
	}
	spec := kinds["loop"]
	for _, tc := range []struct {
		name                                 string
		col, chk                             []verdict
		caught, wrong, missed, alarm, differ bool
	}{
		{name: "caught by both on the span", col: []verdict{v("no_loops", "c")}, chk: []verdict{v("no_loops", "c")}, caught: true},
		{name: "caught on another span", col: []verdict{v("no_loops", "b")}, chk: []verdict{v("no_loops", "b")}, wrong: true},
		{name: "missed", missed: true},
		{name: "the collector alone", col: []verdict{v("no_loops", "c")}, caught: true, differ: true},
		{name: "another assertion too", col: []verdict{v("no_loops", "c"), v("token_budget", "a")},
			chk: []verdict{v("token_budget", "a"), v("no_loops", "c")}, caught: true, alarm: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := judgeOne(spec, loop, tc.col, tc.chk)
			if j.caught != tc.caught || j.wrongSpan != tc.wrong || j.missed != tc.missed || j.falseAlarm != tc.alarm || j.agree == tc.differ {
				t.Errorf("got %+v", j)
			}
		})
	}
	if j := judgeOne(kinds["strong"], nil, nil, []verdict{v("no_loops", "c")}); !j.falseAlarm || j.agree {
		t.Errorf("a verdict from check alone on a correct conversation: got %+v", j)
	}
}
