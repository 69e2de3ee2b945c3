// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

func stoveConfig(t *testing.T) *Config {
	cfg, err := loadConfig(t, "stove")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// θ = 0.965 lies between P_safe(s0) ≈ 0.9599 and P_safe(s1) ≈ 0.9685: the
// first event is a risk; turning the stove on is not; the fork on the burner
// with the knob on is the unsafe state; knob off with the fork on the burner
// was never seen in training.
func TestAnnotatesTheRightSpans(t *testing.T) {
	p, sink := newTestProcessor(t, stoveConfig(t), nopSettings())
	in := feed(t, p, fixtures.StoveTrace(0, "",
		fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"},
		fixtures.ToolCall{Tool: "stir", Fork: true}, fixtures.ToolCall{Tool: "turn_off_stove", Fork: true}))
	shutdown(t, p)
	if out := sink.SpanCount(); out != in {
		t.Fatalf("%d spans in, %d out", in, out)
	}
	want := []string{
		"execute_tool look risk 00 0.9599",
		"execute_tool stir risk 11 0.0000 violation",
		"execute_tool turn_off_stove unknown_state 10",
	}
	if got := annotations(sink); !slices.Equal(got, want) {
		t.Errorf("annotations\n got %q\nwant %q", got, want)
	}
}

func TestExplanationOnTheSpan(t *testing.T) {
	cfg := stoveConfig(t)
	cfg.Threshold = 0.97
	p, sink := newTestProcessor(t, cfg, nopSettings())
	feed(t, p, fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "turn_on_stove"}))
	shutdown(t, p)
	span := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
	a := span.Events().At(0).Attributes().AsRaw()
	want := "P(stay safe) = 0.9685 < 0.97 in state knob_on, not fork_on_burner; most likely way to unsafe: fork_on_burner becomes true, p = 0.02941"
	if a[verdictattr.Explanation] != want || a[verdictattr.EvaluationName] != "always_safe" || a[verdictattr.EvidenceNextState] != "11" {
		t.Errorf("event attributes %v", a)
	}
	if math.Abs(a[verdictattr.ScoreValue].(float64)-338.0/349) > 1e-12 || a[verdictattr.Threshold] != 0.97 {
		t.Errorf("score %v", a[verdictattr.ScoreValue])
	}
}

func TestReportEveryAndUnknownPass(t *testing.T) {
	cfg := stoveConfig(t)
	cfg.Report, cfg.UnknownState = guard.ReportEvery, guard.UnknownPass
	p, sink := newTestProcessor(t, cfg, nopSettings())
	feed(t, p, fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "look", Fork: true}))
	shutdown(t, p)
	want := []string{"execute_tool look risk 00 0.9599", "execute_tool look risk 00 0.9599"}
	if got := annotations(sink); !slices.Equal(got, want) {
		t.Errorf("annotations %q, want %q", got, want)
	}
}

// A latched predicate holds across the traces of a conversation: the knob
// turned on in the first turn is still on when the fork goes on the burner
// in the second.
func TestLatchedAcrossTracesOfAConversation(t *testing.T) {
	cfg := stoveConfig(t)
	cfg.GroupBy = "conversation"
	p, sink := newTestProcessor(t, cfg, nopSettings())
	feed(t, p, fixtures.StoveTrace(0, "conv-1", fixtures.ToolCall{Tool: "turn_on_stove"}))
	p.Tick(time.Now().Add(5 * time.Second))
	feed(t, p, fixtures.StoveTrace(1, "conv-1", fixtures.ToolCall{Tool: "stir", Fork: true}))
	shutdown(t, p)
	want := []string{"execute_tool stir risk 11 0.0000 violation"}
	if got := annotations(sink); !slices.Equal(got, want) {
		t.Errorf("annotations %q, want %q", got, want)
	}
}

// Spans that come after their trace was scored continue its group: the
// latch and the crossing state carry over, and nothing is lost.
func TestLateSpansContinueTheirGroup(t *testing.T) {
	p, sink := newTestProcessor(t, stoveConfig(t), nopSettings())
	whole := fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "turn_on_stove"}, fixtures.ToolCall{Tool: "stir", Fork: true})
	first, rest := splitAfter(whole, 2) // the root and turn_on_stove
	in := feed(t, p, first)
	p.Tick(time.Now().Add(5 * time.Second))
	in += feed(t, p, rest)
	shutdown(t, p)
	if out := sink.SpanCount(); out != in {
		t.Fatalf("%d spans in, %d out", in, out)
	}
	want := []string{"execute_tool stir risk 11 0.0000 violation"}
	if got := annotations(sink); !slices.Equal(got, want) {
		t.Errorf("annotations %q, want %q", got, want)
	}
}

func TestResponseProperty(t *testing.T) {
	cfg, err := loadConfig(t, "response")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Threshold = 0.99
	p, sink := newTestProcessor(t, cfg, nopSettings())
	steps := []fixtures.ToolCall{{Tool: "turn_on_stove"}}
	for range 6 {
		steps = append(steps, fixtures.ToolCall{Tool: "look"})
	}
	feed(t, p, fixtures.StoveTrace(0, "", steps...))
	shutdown(t, p)
	got := annotations(sink)
	if len(got) != 2 || !strings.HasPrefix(got[0], "execute_tool turn_on_stove risk 01") || !strings.HasSuffix(got[1], "violation") {
		t.Fatalf("annotations %q", got)
	}
	span := sink.AllTraces()[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(6) // the fifth look: within 5 passed
	if v, ok := span.Attributes().Get(verdictattr.Violation); !ok || !v.Bool() {
		t.Errorf("violation not on the sixth look: %v", span.Attributes().AsRaw())
	}
}

// Learning only: the 30 traces of spec V2 through the processor give the
// model of spec V1, written atomically at shutdown.
func TestOnlineLearningWritesTheV2Model(t *testing.T) {
	cfg, err := loadConfig(t, "learn_only")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg.Learn.Output = filepath.Join(dir, "online.json")
	p, sink := newTestProcessor(t, cfg, nopSettings())
	for n := range 30 {
		feed(t, p, fixtures.V2Trace(n))
	}
	shutdown(t, p)
	if len(annotations(sink)) != 0 {
		t.Errorf("learning only annotated %q", annotations(sink))
	}
	m := fixtures.Model(t, cfg.Learn.Output)
	if !m.Counts().Equal(stoveModel(t).Counts()) {
		t.Errorf("counts %v", m.Counts().Pairs())
	}
	if ps := psafe(t, m, 0); math.Abs(ps-335.0/349) > 1e-12 {
		t.Errorf("P_safe(s0) = %.15f, want 335/349", ps)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files left beside the model: %v", entries)
	}
}

// A failed write leaves the previous model file byte for byte, and no
// temporary file beside it, and is counted.
func TestFailedWriteKeepsThePreviousModel(t *testing.T) {
	cfg, err := loadConfig(t, "learn_only")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The temporary file beside it, "." + name + ".tmp-" + digits, is longer
	// than the 255 bytes a file name may have: the write fails even as root,
	// whom permissions do not stop, and the file itself stays readable.
	cfg.Learn.Output = filepath.Join(dir, strings.Repeat("m", 245)+".json")
	previous, err := os.ReadFile(filepath.Join("testdata", "stove.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.Learn.Output, previous, 0o644); err != nil {
		t.Fatal(err)
	}
	set, reader := meteredSettings()
	p, _ := newTestProcessor(t, cfg, set)
	feed(t, p, fixtures.V2Trace(0))
	shutdown(t, p)
	if got, err := os.ReadFile(cfg.Learn.Output); err != nil || !bytes.Equal(got, previous) {
		t.Errorf("the previous model changed (%v): %d bytes, was %d", err, len(got), len(previous))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left beside the model: %v", entries)
	}
	got := metricsOf(t, reader)
	if got["otelcol_processor_probguard_model_writes{result=error}"] != 1 || got["otelcol_processor_probguard_model_writes{result=ok}"] != 0 {
		t.Errorf("model writes: %v", got)
	}
}

// With serve, the served model becomes the file's counts plus the live
// ones: s2 (fork on the burner, knob off), unknown before, is known after.
func TestServeSwapsInTheLearnedModel(t *testing.T) {
	cfg := stoveConfig(t)
	cfg.Learn = &LearnConfig{Output: filepath.Join(t.TempDir(), "online.json"), Serve: true}
	p := createUnstarted(t, cfg, nopSettings()) // no clock goroutine reads the learner's fields this test writes
	feed(t, p, fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "look", Fork: true}))
	p.Tick(time.Now().Add(2 * time.Minute)) // scored, and its group ended
	if d := p.served.Load().guard.Step(&guard.Run{}, 0b01); d.Known {
		t.Fatal("s2 known before learning")
	}
	p.learner.written = time.Time{} // due
	p.maybeLearn(t.Context(), false)
	if d := p.served.Load().guard.Step(&guard.Run{}, 0b01); !d.Known {
		t.Error("s2 still unknown after serving the learned model")
	}
	if got := p.served.Load().guard.Model().Counts().Traces(); got != 31 {
		t.Errorf("served model of %d traces, want 30 + 1", got)
	}
	shutdown(t, p)
}

func stoveModel(t *testing.T) *dtmc.Model {
	return fixtures.Model(t, filepath.Join("testdata", "stove.json"))
}

func psafe(t *testing.T, m *dtmc.Model, s dtmc.State) float64 {
	t.Helper()
	sv, _ := dtmc.NewSolver(dtmc.Options{})
	sf, err := m.Solve(dtmc.Property{Kind: dtmc.AlwaysSafe, Unsafe: "fork_on_burner and knob_on"}, sv)
	if err != nil {
		t.Fatal(err)
	}
	i, _ := m.Index(s)
	return sf.PSafe(i)
}

// A restart goes on from the counts learn.output holds: two runs of 15
// traces each write the model of all 30.
func TestOnlineLearningResumesAfterARestart(t *testing.T) {
	cfg, err := loadConfig(t, "learn_only")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Learn.Output = filepath.Join(t.TempDir(), "online.json")
	for run := range 2 {
		p, _ := newTestProcessor(t, cfg, nopSettings())
		for n := range 15 {
			feed(t, p, fixtures.V2Trace(15*run+n))
		}
		shutdown(t, p)
	}
	if got := fixtures.Model(t, cfg.Learn.Output).Counts(); !got.Equal(stoveModel(t).Counts()) {
		t.Errorf("after two runs: %v", got.Pairs())
	}
}

// A conversation that ended idle, kept for retention, and taken up again by
// its next turn is one run: live learning counts its end once, at its last
// end, as agentguard learn counts it, not once at each end.
func TestOnlineLearningCountsAResumedConversationsEndOnce(t *testing.T) {
	cfg, err := loadConfig(t, "learn_only")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Learn.Output = filepath.Join(t.TempDir(), "online.json")
	cfg.GroupBy, cfg.GroupTimeout = "conversation", time.Minute
	p := createUnstarted(t, cfg, nopSettings()) // no clock goroutine: the test's Tick is the only one
	now := time.Now()
	for turn := range 2 {
		feed(t, p, fixtures.StoveTrace(turn, "c", fixtures.ToolCall{Tool: "turn_on_stove"}, fixtures.ToolCall{Tool: "look", Fork: true}))
		now = now.Add(5 * time.Minute)
		p.Tick(now) // judged, then ended idle (kept for retention)
	}
	counts := p.learner.Counts()
	var ends, moves uint64
	for _, pc := range counts.Pairs() {
		moves += pc.N
		if pc.To == dtmc.End {
			ends += pc.N
		}
	}
	if counts.Traces() != 1 || ends != 1 || moves != 4 {
		t.Errorf("one conversation of 4 events counted as %d runs, %d ends, %d moves; want 1, 1, 4 (3 moves and its end): %v",
			counts.Traces(), ends, moves, counts.Pairs())
	}
	shutdown(t, p)
}

func TestLearnConfigErrors(t *testing.T) {
	cfg := stoveConfig(t)
	cfg.Learn = &LearnConfig{Output: "./testdata/../testdata/stove.json"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "is also model") {
		t.Errorf("learn.output = model: %v", err)
	}
	cfg, err := loadConfig(t, "learn_only")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Learn.Serve = true
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "learn.serve: needs model") {
		t.Errorf("serve without a model: %v", err)
	}
}
