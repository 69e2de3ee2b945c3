// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const weatherConfig = "../../examples/weather/collector.yaml"

func traceFile(name string) string { return filepath.Join("..", "..", "testdata", "traces", name) }

func TestCheckGoodRunPasses(t *testing.T) {
	code, out, errOut := runCmd("check", "--config", weatherConfig,
		traceFile("adk-weather/adk-good-42-0.json"), traceFile("adk-weather/adk-good-42-1.json"))
	if code != 0 || !strings.Contains(out, "0 violations") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

// The paper's failing run: te1 fails within turn 1 and across the turns.
func TestCheckBadRunFails(t *testing.T) {
	code, out, errOut := runCmd("check", "--config", weatherConfig,
		traceFile("adk-weather/adk-bad-43-1.json"), traceFile("adk-weather/adk-bad-43-0.json"))
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"VIOLATION te1 in group session-194eb3ef",
		"te1: always xferToGreeting >> sayHello + xferToWeather: FAILURE from event 1 to 3",
		"FAILURE from event 3 to 4",
		"2 violations (te1: 2)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// The config is resolved as the collector resolves it: ${env:...} expanded.
func TestCheckExpandsEnv(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("processors:\n  temporalcheck:\n    group_by: ${env:GROUPING:-trace_id}\n"+
		"    predicates:\n      xferToGreeting: {transfer_to: greeting_agent}\n      xferToWeather: {transfer_to: weather_agent_v2}\n"+
		"      sayHello: {tool: say_hello}\n    assertions:\n      - {name: te1, always: 'xferToGreeting >> sayHello + xferToWeather'}\n"), 0o600)
	files := []string{traceFile("adk-weather/adk-bad-43-0.json"), traceFile("adk-weather/adk-bad-43-1.json")}
	_, out, _ := runCmd(append([]string{"check", "--config", cfg}, files...)...)
	if !strings.Contains(out, "1 violations") {
		t.Errorf("per trace: %s", out)
	}
	t.Setenv("GROUPING", "gen_ai.conversation.id")
	_, out, _ = runCmd(append([]string{"check", "--config", cfg}, files...)...)
	if !strings.Contains(out, "2 violations") {
		t.Errorf("per conversation: %s", out)
	}
}

func TestCheckJSONAndJSONLines(t *testing.T) {
	// The two turns as JSON lines in one file, as a file exporter writes them.
	dir := t.TempDir()
	var lines []string
	for _, f := range []string{"adk-weather/adk-bad-43-0.json", "adk-weather/adk-bad-43-1.json"} {
		b, err := os.ReadFile(traceFile(f))
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		compact, _ := json.Marshal(v)
		lines = append(lines, string(compact))
	}
	path := filepath.Join(dir, "run.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmd("check", "--config", weatherConfig, "--format", "json", path)
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var got struct {
		Findings []finding    `json:"findings"`
		Summary  checkSummary `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Summary.Violations != 2 || got.Findings[0].StartEvent != 1 || got.Findings[0].EndEvent != 3 || got.Findings[1].StartEvent != 3 {
		t.Fatalf("findings %+v", got)
	}
}

func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("processors:\n  temporalcheck:\n    predicates:\n      - {name: a, tool: x}\n    assertions:\n      - {name: te1, always: 'a >> (a'}\n"), 0o600)
	two := filepath.Join(dir, "two.yaml")
	os.WriteFile(two, []byte("processors:\n  temporalcheck/a: {}\n  temporalcheck/b: {}\n"), 0o600)
	notJSON := filepath.Join(dir, "x.json")
	os.WriteFile(notJSON, []byte("{\"resourceSpans\": [\n"), 0o600)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte("{}"), 0o600)
	labels := filepath.Join(dir, "labels.json")
	os.WriteFile(labels, []byte(`{"episodes": {"ep-001": "safe"}}`), 0o600)
	badLine := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(badLine, []byte("{\"resourceSpans\": []}\n{\"resourceSpans\": 5}\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--config", weatherConfig, badLine}, "bad.jsonl: line 2: not an OTLP/JSON ExportTraceServiceRequest"},
		{[]string{"check", traceFile("adk-weather/adk-good-42-0.json")}, "--config is required"},
		{[]string{"check", "--config", weatherConfig}, "no trace files given"},
		{[]string{"check", "--config", weatherConfig, "--format", "xml", "f"}, `unknown format "xml"`},
		{[]string{"check", "--config", bad, traceFile("adk-weather/adk-good-42-0.json")}, `assertion "te1": always: "a >> (a": col 8: expected ')', found end of expression`},
		{[]string{"check", "--config", two, "f"}, "several temporalcheck processors (temporalcheck/a, temporalcheck/b): choose one with --processor"},
		{[]string{"check", "--config", weatherConfig, "--processor", "temporalcheck/x", "f"}, `no processor "temporalcheck/x"`},
		{[]string{"check", "--config", weatherConfig, notJSON}, "x.json: not an OTLP/JSON ExportTraceServiceRequest"},
		// JSON objects that are not requests: an error, not an empty pass.
		{[]string{"check", "--config", weatherConfig, empty}, "empty.json: not an OTLP/JSON ExportTraceServiceRequest: a JSON object without resourceSpans (its keys: [])"},
		{[]string{"check", "--config", weatherConfig, labels}, `labels.json: not an OTLP/JSON ExportTraceServiceRequest: a JSON object without resourceSpans (its keys: ["episodes"])`},
	} {
		code, _, errOut := runCmd(tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args[1:], code, errOut, tc.want)
		}
	}
}

// misspelled writes the weather agents' configuration with the greeting
// agent's name misspelled: te1 can then never trigger.
func misspelled(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(weatherConfig)
	if err != nil {
		t.Fatal(err)
	}
	typo := strings.Replace(string(b), "transfer_to: greeting_agent}", "transfer_to: greeting_agnet}", 1)
	if typo == string(b) {
		t.Fatal("the weather configuration no longer declares transfer_to: greeting_agent")
	}
	path := filepath.Join(t.TempDir(), "collector.yaml")
	if err := os.WriteFile(path, []byte(typo), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The paper's failing run under a misspelled agent name passes, but says
// loudly that the transfer never happened; --strict fails it.
func TestCheckTypoInAgentName(t *testing.T) {
	cfg := misspelled(t)
	files := []string{traceFile("adk-weather/adk-bad-43-0.json"), traceFile("adk-weather/adk-bad-43-1.json")}
	code, out, errOut := runCmd(append([]string{"check", "--config", cfg}, files...)...)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"te1: triggered at 0 of 5 events (starts with xferToGreeting), 0 violations, 0 pending",
		"predicates held at (of 5 events): xferToGreeting 0, xferToWeather 1,",
		"2 files, 19 spans, 0 verdicts on spans, 0 violations\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	warning := `agentguard check: warning: predicate xferToGreeting (transfer_to: greeting_agnet) never held on the 5 events read; did you mean "greeting_agent"?`
	if !strings.Contains(errOut, warning) {
		t.Errorf("stderr lacks %q:\n%s", warning, errOut)
	}
	code, _, errOut = runCmd(append([]string{"check", "--strict", "--config", cfg}, files...)...)
	if code != exitStrict || !strings.Contains(errOut, warning) || !strings.Contains(errOut, "--strict: ") {
		t.Errorf("--strict: exit %d, want %d\n%s", code, exitStrict, errOut)
	}
}

// A misspelt group_by makes every trace a group of its own: check says
// so, with the keyword it was near.
func TestCheckTypoInGroupBy(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "typo.yaml")
	if err := os.WriteFile(cfg, []byte(`processors:
  temporalcheck:
    group_by: conversaton
    predicates:
      - {name: sayHello, tool: say_hello}
    assertions:
      - {name: hello, always: 'sayHello >> ok'}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, errOut := runCmd("check", "--config", cfg, traceFile("adk-weather/adk-bad-43-0.json"), traceFile("adk-weather/adk-bad-43-1.json"))
	want := `agentguard check: warning: group_by "conversaton": no trace carried it, so every trace was a group of its own; did you mean "conversation"?`
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
}

// With the right names the same run counts te1's two triggers and fails,
// --strict or not: a violation outranks warnings.
func TestCheckCountsTriggers(t *testing.T) {
	code, out, _ := runCmd("check", "--strict", "--config", weatherConfig,
		traceFile("adk-weather/adk-bad-43-0.json"), traceFile("adk-weather/adk-bad-43-1.json"))
	for _, want := range []string{
		"te1: triggered at 2 of 5 events (starts with xferToGreeting), 2 violations, 0 pending",
		"te3: triggered at 1 of 5 events (starts with xferToWeather), 0 violations, 0 pending",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
}

// checkJSON is check's JSON output, decoded.
type checkJSON struct {
	Findings   []finding        `json:"findings"`
	Pending    []pendingVerdict `json:"pending"`
	Assertions []assertionStats `json:"assertions"`
	Predicates []predicateStats `json:"predicates"`
	Warnings   []string         `json:"warnings"`
	Summary    checkSummary     `json:"summary"`
}

// Turn 1 of the good run alone: the transfer back to the weather agent at
// its last event still waits for the weather agent's answer.
func TestCheckListsPending(t *testing.T) {
	file := traceFile("adk-weather/adk-good-42-0.json")
	code, out, errOut := runCmd("check", "--config", weatherConfig, file)
	want := "PENDING te3 in group session-30877432, trace d1026706d7e805da846a32c3bb81e3c2, from event 3 of 3 at span e9df469611a11f51" +
		" (execute_tool transfer_to_agent): still waiting for getWeather | xferToGreeting | xferToFarewell\n"
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "te3: triggered at 1 of 3 events (starts with xferToWeather), 0 violations, 1 pending") {
		t.Fatalf("exit %d, output lacks %q:\n%s", code, want, out)
	}
	if !strings.Contains(errOut, "warning: 1 pending verdict: ") {
		t.Errorf("stderr: %s", errOut)
	}
	if code, _, _ := runCmd("check", "--strict", "--config", weatherConfig, file); code != exitStrict {
		t.Errorf("--strict: exit %d, want %d", code, exitStrict)
	}

	_, out, _ = runCmd("check", "--format", "json", "--config", weatherConfig, file)
	var got checkJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p := got.Pending
	if len(p) != 1 || p[0].Assertion != "te3" || p[0].Group != "session-30877432" || p[0].StartEvent != 3 || p[0].LastEvent != 3 ||
		p[0].SpanID != "e9df469611a11f51" || len(p[0].WaitingFor) != 1 || p[0].WaitingFor[0] != "getWeather | xferToGreeting | xferToFarewell" {
		t.Errorf("pending %+v", p)
	}
	te3 := got.Assertions[2]
	if te3.Name != "te3" || te3.Triggered != 1 || te3.Pending != 1 || len(te3.TriggeredBy) != 1 || te3.TriggeredBy[0] != "xferToWeather" {
		t.Errorf("te3 %+v", te3)
	}
	if got.Summary.Pending != 1 || got.Summary.Events != 3 || got.Summary.Groups != 1 || got.Summary.Warnings != len(got.Warnings) {
		t.Errorf("summary %+v, warnings %q", got.Summary, got.Warnings)
	}
}

// No list of the JSON output is ever null, in a run without findings,
// pending verdicts or warnings as in one with all of them.
func TestCheckJSONListsNeverNull(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`{"resourceSpans": []}`), 0o600)
	for _, args := range [][]string{
		{"--config", weatherConfig, empty},
		{"--config", misspelled(t), traceFile("adk-weather/adk-good-42-0.json")},
		{"--config", weatherConfig, traceFile("adk-weather/adk-bad-43-0.json"), traceFile("adk-weather/adk-bad-43-1.json")},
	} {
		_, out, _ := runCmd(append([]string{"check", "--format", "json"}, args...)...)
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if path := nullIn(v, "$"); path != "" {
			t.Errorf("%v: null at %s:\n%s", args, path, out)
		}
		for _, key := range []string{"findings", "pending", "assertions", "predicates", "warnings"} {
			if _, ok := v.(map[string]any)[key].([]any); !ok {
				t.Errorf("%v: %s is not a list", args, key)
			}
		}
	}
}

// nullIn is the path of the first null in a decoded JSON value, or "".
func nullIn(v any, path string) string {
	switch x := v.(type) {
	case nil:
		return path
	case map[string]any:
		for k, e := range x {
			if p := nullIn(e, path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range x {
			if p := nullIn(e, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// Input without a single event checks nothing: said, and a --strict failure.
func TestCheckNoEvents(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.json")
	os.WriteFile(empty, []byte(`{"resourceSpans": []}`), 0o600)
	code, out, errOut := runCmd("check", "--config", weatherConfig, empty)
	if code != 0 || !strings.Contains(errOut, "warning: no events: the events condition selected none of the 0 spans read") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, "never held") {
		t.Errorf("a predicate warning for each predicate besides no events:\n%s", errOut)
	}
	if code, _, _ := runCmd("check", "--strict", "--config", weatherConfig, empty); code != exitStrict {
		t.Errorf("--strict: exit %d, want %d", code, exitStrict)
	}
}

func TestCheckHelpDocumentsStrict(t *testing.T) {
	_, _, errOut := runCmd("check", "-h")
	for _, want := range []string{"usage: agentguard check ", "-strict", "3 no violation, but\n--strict and at least one warning"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("help lacks %q:\n%s", want, errOut)
		}
	}
}

// The shipped weather configuration marks the farewell predicates optional
// (a correct conversation need not say goodbye): --strict passes the
// paper's correct runs, and still fails when a predicate that is not
// optional never held.
func TestCheckStrictPassesCorrectRunsWithOptionalPredicates(t *testing.T) {
	for _, files := range [][]string{
		{traceFile("adk-weather/adk-good-42-0.json"), traceFile("adk-weather/adk-good-42-1.json")},
		{traceFile("adk-js/strong-run-01.json")},
	} {
		if code, _, errOut := runCmd(append([]string{"check", "--strict", "--config", weatherConfig}, files...)...); code != 0 {
			t.Errorf("%v: exit %d, want 0\n%s", files, code, errOut)
		}
	}
	code, _, errOut := runCmd("check", "--strict", "--config", misspelled(t), traceFile("adk-js/strong-run-01.json"))
	if code != exitStrict || !strings.Contains(errOut, "predicate xferToGreeting") || strings.Contains(errOut, "predicate sayGoodbye") {
		t.Errorf("a misspelt predicate that is not optional: exit %d\n%s", code, errOut)
	}
}

// A never assertion pending when its group ends (a forbidden sequence begun
// and not completed) is the assertion holding: no warning, --strict passes;
// an always assertion pending at the end is still a doubt.
func TestCheckPendingNeverIsNoWarning(t *testing.T) {
	write := func(assertion string) string {
		path := filepath.Join(t.TempDir(), "c.yaml")
		cfg := "processors:\n  temporalcheck:\n    group_by: gen_ai.conversation.id\n    predicates:\n      - {name: getWeather, tool: get_weather}\n      - {name: sayHello, tool: say_hello, optional: true}\n    assertions:\n      - " + assertion + "\n"
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	files := []string{traceFile("adk-weather/adk-good-42-0.json"), traceFile("adk-weather/adk-good-42-1.json")}
	code, out, errOut := runCmd(append([]string{"check", "--strict", "--config", write("{name: twice, never: 'getWeather + getWeather'}")}, files...)...)
	if code != 0 || !strings.Contains(out, "PENDING twice") || strings.Contains(errOut, "pending verdict") {
		t.Errorf("a never pending at the end: exit %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = runCmd(append([]string{"check", "--strict", "--config", write("{name: answered, always: 'getWeather >> sayHello'}")}, files...)...)
	if code != exitStrict || !strings.Contains(errOut, "1 pending verdict") {
		t.Errorf("an always pending at the end: exit %d\n%s", code, errOut)
	}
}

// The allowlist recipe of docs/patterns.md: a call of a tool not listed is
// a violation at that call.
func TestCheckAllowlistRecipe(t *testing.T) {
	recipe := `processors:
  temporalcheck:
    group_by: conversation
    predicates:
      - {name: anyTool, tool: '*'}
      - {name: sayHello, tool: say_hello}
      - {name: getWeather, tool: get_weather}
      - {name: transfer, tool: transfer_to_agent}
    assertions:
      - {name: allowlist, never: 'anyTool & ~(sayHello | getWeather | transfer)'}
`
	// The allowlist predicate says the same in one line.
	firstClass := `processors:
  temporalcheck:
    group_by: conversation
    predicates:
      - {name: unlisted, allowlist: {tools: [say_hello, 'get_*', transfer_to_agent]}}
    assertions:
      - {name: allowlist, never: {x: unlisted}}
`
	for name, cfg := range map[string]string{"recipe": recipe, "allowlist predicate": firstClass} {
		path := filepath.Join(t.TempDir(), "allow.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runCmd("check", "--config", path, traceFile("adk-js/parallel-goodbye.json"))
		if code != 1 || strings.Count(out, "VIOLATION allowlist") != 2 || strings.Count(out, "(execute_tool say_goodbye)") != 2 {
			t.Errorf("%s: exit %d, want a violation at each of the two say_goodbye calls\n%s\n%s", name, code, out, errOut)
		}
		if code, out, _ := runCmd("check", "--config", path, traceFile("adk-js/strong-run-01.json")); code != 0 {
			t.Errorf("%s: exit %d on a run of listed tools only\n%s", name, code, out)
		}
	}
}
