// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ADK for TypeScript, recorded: get_weather throws, and ADK leaves its span
// without any attribute, the mark of a failed call. The processor reports a
// violation at that event; check's counts are the processor's, so they say
// that weatherFailed held there and that noFailedWeather was triggered
// (read again from the spans the processor passed on, with the verdict it
// wrote on that one, the span has attributes and weatherFailed does not
// hold), and nothing warns that it never held.
func TestCheckCountsAreTheProcessors(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "adk.yaml")
	if err := os.WriteFile(cfg, []byte(`processors:
  temporalcheck:
    group_by: gen_ai.conversation.id
    predicates:
      - {name: xferToGreeting, transfer_to: greeting_agent}
      - {name: xferToWeather, transfer_to: weather_agent_v2}
      - {name: sayHello, tool: say_hello}
      - {name: getWeather, tool: get_weather}
      - {name: weatherFailed, tool: get_weather, failed: true}
    assertions:
      - {name: te1, always: 'xferToGreeting >> sayHello + xferToWeather'}
      - {name: noFailedWeather, never: weatherFailed}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd("check", "--strict", "--config", cfg, traceFile("adk-js/failed-get-weather.json"))
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a violation)\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"VIOLATION noFailedWeather in group adk-failed-get-weather",
		"4 +16ms tool get_weather (failed) [getWeather weatherFailed]",
		"noFailedWeather: triggered at 1 of 4 events (starts with weatherFailed), 1 violation, 0 pending",
		"predicates held at (of 4 events): xferToGreeting 1, xferToWeather 1, sayHello 1, getWeather 1, weatherFailed 1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("warnings, want none:\n%s", errOut)
	}
}

// A capture path no call of its tool holds is said offline as the
// collector says it live, with the path the calls did hold; its predicate's
// never holding is not said again as a name typo. Real household episodes.
func TestCheckCapturePathNeverPresent(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "capture.yaml")
	if err := os.WriteFile(cfg, []byte(`processors:
  temporalcheck:
    predicates:
      - {name: stoveOn, tool: turn_on_stove, capture: {on: result.stove_onn}}
      - {name: wentTo, tool: go_to, capture: {room: result.room}}
    assertions:
      - {name: stoveThenGo, always: 'stoveOn >> wentTo'}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, errOut := runCmd("check", "--config", cfg,
		traceFile("household-langgraph/ep-001.json"), traceFile("household-langgraph/ep-004.json"))
	want := `agentguard check: warning: predicate stoveOn captures result.stove_onn, absent from all 2 calls of turn_on_stove read: ` +
		`the capture never binds, so the predicate never holds; did you mean "result.stove_on"?` + "\n"
	if errOut != want {
		t.Errorf("stderr\n%s\nwant\n%s", errOut, want)
	}
	if !strings.Contains(out, "stoveOn 0, wentTo ") {
		t.Errorf("output:\n%s", out)
	}
}

// A budget over an attribute no span carries is said, with the key the
// spans did carry; a budget that reads is not, and it holds at the model
// call that crossed it, which the explanation shows with the running total.
// Real ADK spans (GenAI usage attributes).
func TestCheckBudgets(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "budget.yaml")
	if err := os.WriteFile(cfg, []byte(`processors:
  temporalcheck:
    group_by: conversation
    predicates:
      - {name: typo, budget: {sum: gen_ai.usage.input_tokenz, max: 10}}
      - {name: overTokens, budget: {sum: tokens, max: 1500}}
    assertions:
      - {name: tokens, never: {x: overTokens}}
      - {name: typoBudget, never: {x: typo}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, errOut := runCmd("check", "--config", cfg, traceFile("adk-js/strong-run-01.json"))
	want := `agentguard check: warning: predicate typo: no span of the 16 spans read carried gen_ai.usage.input_tokenz, ` +
		`so the budget never adds anything and cannot hold; check the attribute key; did you mean "gen_ai.usage.input_tokens"?` + "\n"
	if errOut != want {
		t.Errorf("stderr\n%s\nwant\n%s", errOut, want)
	}
	if !strings.Contains(out, "call_llm (overTokens: sum of tokens reached 1948 here, over the budget of 1500) [overTokens]") {
		t.Errorf("output:\n%s", out)
	}
}

// A condition that never held because it reads an attribute no span
// carries says which, with the nearest key the spans did carry.
func TestCheckMisspeltAttributeKey(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "key.yaml")
	if err := os.WriteFile(cfg, []byte(`processors:
  temporalcheck:
    group_by: conversation
    predicates:
      - {name: hello, condition: 'span.attributes["gen_ai.tool.nmae"] == "say_hello"'}
    assertions:
      - {name: once, max_calls: {x: hello, n: 1}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, errOut := runCmd("check", "--config", cfg, traceFile("adk-js/strong-run-01.json"))
	want := `attribute "gen_ai.tool.nmae" is on no span read; did you mean "gen_ai.tool.name"?`
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr\n%s\nwant it to say\n%s", errOut, want)
	}
}
