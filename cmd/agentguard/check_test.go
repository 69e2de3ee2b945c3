package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const weatherConfig = "../../examples/weather-agents/collector.yaml"

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
	} {
		code, _, errOut := runCmd(tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args[1:], code, errOut, tc.want)
		}
	}
}
