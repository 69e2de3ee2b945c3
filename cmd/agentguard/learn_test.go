// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/fixtures"
)

const (
	stoveConfig = "testdata/probguard/collector.yaml"
	stoveModel  = "testdata/probguard/stove.json" // the config's model:, V2 learned
)

// The stove's states: fork_on_burner is bit 0, knob_on bit 1.
const (
	s00 dtmc.State = 0b00
	s01 dtmc.State = 0b10 // knob on
	s10 dtmc.State = 0b01 // fork on the burner
	s11 dtmc.State = 0b11 // unsafe
)

// writeTraces writes the traces as one OTLP/JSON request.
func writeTraces(t *testing.T, path string, tds ...ptrace.Traces) string {
	t.Helper()
	all := ptrace.NewTraces()
	for _, td := range tds {
		td.ResourceSpans().MoveAndAppendTo(all.ResourceSpans())
	}
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(all)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// v2Files writes V2's 30 traces as three files of ten.
func v2Files(t *testing.T) []string {
	dir := t.TempDir()
	var files []string
	for f := range 3 {
		var tds []ptrace.Traces
		for n := 10 * f; n < 10*(f+1); n++ {
			tds = append(tds, fixtures.V2Trace(n))
		}
		files = append(files, writeTraces(t, filepath.Join(dir, fmt.Sprintf("v2-%d.json", f)), tds...))
	}
	return files
}

func mustLearn(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errs := runCmd(append([]string{"learn", "--config", stoveConfig}, args...)...)
	if code != 0 {
		t.Fatalf("learn %v: exit %d\n%s\n%s", args, code, out, errs)
	}
	return out
}

// Spec V2 through spans: the counts, P_safe(s0) = 335/349, the file written
// atomically; and it is the model the test configuration serves.
func TestLearnV2ThroughSpans(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "stove.json")
	report := mustLearn(t, append([]string{"-o", out}, v2Files(t)...)...)

	m := fixtures.Model(t, out)
	c := m.Counts()
	if c.Pair(s00, s00) != 150 || c.Pair(s00, s01) != 30 || c.Pair(s01, dtmc.End) != 30 || c.Traces() != 30 || len(c.Pairs()) != 3 {
		t.Errorf("counts %+v, want n(s0,s0)=150 n(s0,s1)=30 n(s1,end)=30 over 30 traces", c.Pairs())
	}
	sv, err := dtmc.NewSolver(dtmc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	safety, err := m.Solve(dtmc.Property{Kind: dtmc.AlwaysSafe, Unsafe: "fork_on_burner and knob_on"}, sv)
	if err != nil {
		t.Fatal(err)
	}
	i, _ := m.Index(s00)
	if got := safety.PSafe(i); math.Abs(got-335.0/349) > 1e-12 {
		t.Errorf("P_safe(s0) = %.15f, want 335/349 = %.15f", got, 335.0/349)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("beside the output: %v, want only stove.json", entries)
	}
	for _, want := range []string{
		"read 3 files: 30 traces in 30 groups, 210 events",
		"states seen: 2 of 4 (00, 01); never seen: 10, 11",
		"wrote " + out + ": 30 runs",
		"00           180      189.562          43028          42848  no",
		"not certified",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("output lacks %q:\n%s", want, report)
		}
	}
	learned, _ := os.ReadFile(out)
	served, err := os.ReadFile(stoveModel)
	if err != nil || string(learned) != string(served) {
		t.Errorf("%s is not V2 learned (%v): regenerate it with agentguard learn", stoveModel, err)
	}
}

// randomStoveTrace is a varied run: the fork put on and off the burner, the
// stove turned on and off, at most one of them a call.
func randomStoveTrace(r *rand.Rand, n int) ptrace.Traces {
	fork := false
	var calls []fixtures.ToolCall
	for range 2 + r.IntN(8) {
		switch tool := []string{"look", "move_fork", "turn_on_stove", "turn_off_stove"}[r.IntN(4)]; tool {
		case "move_fork":
			fork = !fork
			calls = append(calls, fixtures.ToolCall{Tool: tool, Fork: fork})
		default:
			calls = append(calls, fixtures.ToolCall{Tool: tool, Fork: fork})
		}
	}
	return fixtures.StoveTrace(n, "", calls...)
}

// Counts are the model's sufficient statistic: merging the models of two
// shards is learning on the union, with or without more files.
func TestLearnMergeIsLearningOnTheUnion(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(2026, 12))
	var shardA, shardB []string
	for f := range 4 {
		var tds []ptrace.Traces
		for n := 10 * f; n < 10*(f+1); n++ {
			tds = append(tds, randomStoveTrace(r, n))
		}
		path := writeTraces(t, filepath.Join(dir, fmt.Sprintf("t%d.json", f)), tds...)
		if f < 2 {
			shardA = append(shardA, path)
		} else {
			shardB = append(shardB, path)
		}
	}
	a, b, all, merged, mixed := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"),
		filepath.Join(dir, "all.json"), filepath.Join(dir, "m.json"), filepath.Join(dir, "mixed.json")
	mustLearn(t, append([]string{"-o", a}, shardA...)...)
	mustLearn(t, append([]string{"-o", b}, shardB...)...)
	mustLearn(t, append([]string{"-o", all}, append(shardA, shardB...)...)...)
	out := mustLearn(t, "--merge", a, "--merge", b, "-o", merged)
	mustLearn(t, append([]string{"--merge", a, "-o", mixed}, shardB...)...)

	want := fixtures.Model(t, all).Counts()
	if want.Traces() != 40 || len(want.Pairs()) < 8 {
		t.Fatalf("the union's counts are too plain to test merging: %d traces, %v", want.Traces(), want.Pairs())
	}
	for _, path := range []string{merged, mixed} {
		if got := fixtures.Model(t, path).Counts(); !got.Equal(want) {
			t.Errorf("%s: counts %v (%d traces), want %v", filepath.Base(path), got.Pairs(), got.Traces(), want.Pairs())
		}
	}
	if !strings.Contains(out, "read 0 files: 0 traces in 0 groups, 0 events") || !strings.Contains(out, "merged 2 models: "+a+" (20 runs), "+b+" (20 runs)") {
		t.Errorf("merge summary:\n%s", out)
	}
}

// A model over other predicates would mean other states: merging it is an
// error naming the file.
func TestLearnMergeRefusesAnotherAbstraction(t *testing.T) {
	dir := t.TempDir()
	other, err := dtmc.Learn(dtmc.Spec{Predicates: []string{"knob_on", "pot_on"}, Rules: dtmc.Rules{MaxChanges: 1}}, dtmc.NewCounts())
	if err != nil {
		t.Fatal(err)
	}
	otherPath := filepath.Join(dir, "pot.json")
	if err := other.WriteFile(otherPath); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.json")
	code, _, errs := runCmd("learn", "--config", stoveConfig, "--merge", stoveModel, "--merge", otherPath, "-o", out)
	if code != 2 || !strings.Contains(errs, "model "+otherPath+": learned over the predicates [knob_on pot_on]") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a model was written despite the error")
	}
}

// learn writes the model the configuration will serve, so model: need not
// exist yet. A move valid_transitions forbid is skipped with a warning
// naming it; the run's other moves are counted.
func TestLearnNewModelSkipsForbiddenMoves(t *testing.T) {
	dir := t.TempDir()
	cfgText, err := os.ReadFile(stoveConfig)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "models", "stove.json")
	if err := os.Mkdir(filepath.Dir(out), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "collector.yaml")
	os.WriteFile(cfg, []byte(strings.Replace(string(cfgText), "model: "+stoveModel, "model: "+out, 1)), 0o600)
	// look (00), the stove on with the fork put on the burner in one call
	// (00 → 11: both change), the stove off (10), the fork off (00).
	trace := writeTraces(t, filepath.Join(dir, "t.json"), fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "look"},
		fixtures.ToolCall{Tool: "turn_on_stove", Fork: true}, fixtures.ToolCall{Tool: "turn_off_stove", Fork: true}, fixtures.ToolCall{Tool: "move_fork"}))

	code, stdout, errs := runCmd("learn", "--config", cfg, "-o", out, trace)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
	if want := "warning: valid_transitions: 1 move not counted: 00 → 11: 2 predicates change, max_changes is 1"; !strings.Contains(errs, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs)
	}
	c := fixtures.Model(t, out).Counts()
	got := c.Pairs()
	want := []dtmc.PairCount{{From: s00, To: dtmc.End, N: 1}, {From: s10, To: s00, N: 1}, {From: s11, To: s10, N: 1}}
	if !slices.Equal(got, want) || c.Starts(s00) != 1 {
		t.Errorf("counts %v, starts in 00 %d; want %v and 1", got, c.Starts(s00), want)
	}
}

func TestLearnBadInput(t *testing.T) {
	dir := t.TempDir()
	badUnsafe := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badUnsafe, []byte("processors:\n  probguard:\n    predicates:\n      knob_on: {set: {tool: on}, reset: {tool: off}}\n    unsafe: 'knob_on and (knob_on'\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "m.json", "f"}, "--config is required"},
		{[]string{"--config", stoveConfig, "f"}, "-o MODEL.json is required"},
		{[]string{"--config", stoveConfig, "-o", "m.json"}, "no trace files and no --merge models given"},
		{[]string{"--config", badUnsafe, "-o", "m.json", "f"}, "bad.yaml: processors::probguard: unsafe: col 21: missing closing ) for ( at col 13"},
		{[]string{"--config", stoveConfig, "--processor", "probguard/oven", "-o", "m.json", "f"}, `no processor "probguard/oven" (probguard processors: probguard/stove)`},
		{[]string{"--config", stoveConfig, "-o", filepath.Join(dir, "m.json"), filepath.Join(dir, "missing.json")}, "missing.json: no such file"},
		{[]string{"--config", stoveConfig, "-o", filepath.Join(dir, "m.json"), "--merge", filepath.Join(dir, "none.json")}, "--merge: open " + filepath.Join(dir, "none.json") + ": no such file"},
	} {
		code, _, errs := runCmd(append([]string{"learn"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// A predicate whose OTTL fails at every event is false there, as live; the
// failures are counted and reported once, not once a span.
func TestLearnReportsOTTLErrorsOnce(t *testing.T) {
	dir := t.TempDir()
	cfgText, err := os.ReadFile(stoveConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "collector.yaml")
	failing := strings.Replace(string(cfgText), `'span.attributes["env.fork_on_burner"] == true'`,
		`'ParseJSON(span.attributes["gen_ai.tool.name"])["fork"] == true'`, 1)
	os.WriteFile(cfg, []byte(failing), 0o600)
	code, out, errs := runCmd(append([]string{"learn", "--config", cfg, "-o", filepath.Join(dir, "m.json")}, v2Files(t)...)...)
	if code != 0 || !strings.Contains(out, "states seen: 2 of 4 (00, 01)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if n := strings.Count(errs, "predicate evaluation failed"); n != 1 || !strings.Contains(errs, "warning: 210 OTTL evaluation errors") {
		t.Errorf("%d failures logged, want 1, and the count of 210:\n%s", n, errs)
	}
}

func TestProbguardCommandsDocumentTheirFlags(t *testing.T) {
	for cmd, flags := range map[string][]string{
		"learn":    {"-config file", "-processor", "-o MODEL.json", "-merge M.json", "-epsilon", "-delta"},
		"risk":     {"-config file", "-processor", "-model file", "-json"},
		"evaluate": {"-config file", "-processor", "-model file", "-thresholds", "-format"},
	} {
		_, _, errs := runCmd(cmd, "-h")
		if !strings.HasPrefix(errs, "usage: agentguard "+cmd+" --config COLLECTOR.yaml") {
			t.Errorf("%s -h: %s", cmd, errs)
		}
		for _, f := range flags {
			if !strings.Contains(errs, "  "+f) {
				t.Errorf("%s -h lacks %s:\n%s", cmd, f, errs)
			}
		}
	}
}

// Input without a single event is refused with the reason, and no model is
// written: a model of nothing would look like a model.
func TestLearnRefusesNoEvents(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`{"resourceSpans": []}`), 0o600)
	cfgText, err := os.ReadFile(stoveConfig)
	if err != nil {
		t.Fatal(err)
	}
	nothing := filepath.Join(dir, "nothing.yaml")
	os.WriteFile(nothing, []byte(strings.Replace(string(cfgText), "    predicates:\n",
		"    events: 'span.name == \"no such span\"'\n    predicates:\n", 1)), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", stoveConfig, empty}, "no events to learn from: no spans in 1 file"},
		{[]string{"--config", nothing, v2Files(t)[0]},
			`no events to learn from: the events condition (condition: span.name == "no such span") selected none of the 80 spans of 10 traces read from 1 file`},
		// merged counts do not excuse trace files that add nothing
		{[]string{"--config", stoveConfig, "--merge", stoveModel, empty}, "no events to learn from"},
	} {
		out := filepath.Join(dir, "m.json")
		code, _, errs := runCmd(append([]string{"learn", "-o", out}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: %s written", tc.args, out)
		}
	}
}

// A predicate that never held is named, with what it was declared as.
func TestLearnWarnsPredicateNeverHeld(t *testing.T) {
	_, _, errs := runCmd(append([]string{"learn", "--config", stoveConfig, "-o", filepath.Join(t.TempDir(), "m.json")}, v2Files(t)...)...)
	want := `agentguard learn: warning: predicate fork_on_burner (condition: span.attributes["env.fork_on_burner"] == true) never held on the 210 events read`
	if !strings.Contains(errs, want) || strings.Contains(errs, "predicate knob_on") {
		t.Errorf("stderr lacks %q, or warns about knob_on:\n%s", want, errs)
	}
}
