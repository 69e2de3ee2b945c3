// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// A capture path that no call of its tool holds (result.stove_onn, where
// the household tools' result has stove_on) is said at WARN once a minute
// of traffic has passed, with the path the calls did hold, and counted as
// suspected_typos{suspect=capture}; its predicate, which therefore never
// holds, is not said again as a name typo. A capture path that is there
// is no suspect. Real household episodes (OpenInference).
func TestCapturePathNeverPresentIsSaidWithinAMinute(t *testing.T) {
	pcfg := predicate.Config{Predicates: predicate.List{
		{Name: "stoveOn", Predicate: predicate.Predicate{Tool: "turn_on_stove",
			Capture: []predicate.Capture{{Name: "on", From: "result.stove_onn"}}}},
		{Name: "wentTo", Predicate: predicate.Predicate{Tool: "go_to",
			Capture: []predicate.Capture{{Name: "room", From: "result.room"}}}},
	}}
	got, counted := saidAfterAMinute(t, pcfg, "household-langgraph/ep-001.json", "household-langgraph/ep-004.json")
	want := `predicate stoveOn captures result.stove_onn, absent from all 2 calls of turn_on_stove in the first 1m0s of traffic: ` +
		`the capture never binds, so the predicate never holds and assertions over it pass untested; did you mean "result.stove_on"?`
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("warnings\n%q\nwant\n%q", got, want)
	}
	if len(counted) != 1 || counted[kindCapture] != 1 {
		t.Errorf("suspected_typos %v, want capture: 1", counted)
	}
}

// A budget over an attribute no span carries never adds anything: said
// within a minute, with the numeric key the spans did carry; a budget that
// reads tokens in the spans' convention is not.
func TestBudgetNeverReadIsSaidWithinAMinute(t *testing.T) {
	pcfg := predicate.Config{Predicates: predicate.List{
		{Name: "overTokens", Predicate: predicate.Predicate{Budget: &predicate.Budget{Sum: predicate.QuantityTokens, Max: 1e6}}},
		{Name: "overCost", Predicate: predicate.Predicate{Budget: &predicate.Budget{Sum: "llm.token_count.totl", Max: 1e6}}},
	}}
	got, counted := saidAfterAMinute(t, pcfg, "household-langgraph/ep-001.json")
	want := `predicate overCost: no span in the first 1m0s of traffic carried llm.token_count.totl, so the budget never adds ` +
		`anything and cannot hold; check the attribute key; did you mean "llm.token_count.total"?`
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("warnings\n%q\nwant\n%q", got, want)
	}
	if len(counted) != 1 || counted[kindBudget] != 1 {
		t.Errorf("suspected_typos %v, want budget: 1", counted)
	}
}

// saidAfterAMinute feeds the files to a stage of pcfg's predicates and
// returns what its typo watch logged after a minute of traffic (nothing may
// be said before), and suspected_typos by suspect.
func saidAfterAMinute(t *testing.T, pcfg predicate.Config, files ...string) ([]string, map[string]int64) {
	t.Helper()
	core, logs := observer.New(zapcore.WarnLevel)
	set := componenttest.NewNopTelemetrySettings()
	set.Logger = zap.New(core)
	reader := sdkmetric.NewManualReader()
	typos, err := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("t").Int64Counter("suspected_typos")
	if err != nil {
		t.Fatal(err)
	}
	m := nopMetrics()
	m.SuspectedTypos = typos
	cfg := baseConfig()
	cfg.GroupBy, cfg.WarnTyposAfter, cfg.Literals, cfg.Optional = sequence.ByTraceID, time.Minute, pcfg.Literals(), pcfg.OptionalNames()
	s, err := New(cfg, set, new(consumertest.TracesSink), m,
		func() (*events.Source, error) { return events.NewSource(pcfg, cfg.GroupBy, set) }, newRecorder())
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return clock })
	for _, f := range files {
		if err := s.ConsumeTraces(context.Background(), fixtures.Traces(t, f)); err != nil {
			t.Fatal(err)
		}
	}
	said := func() []string {
		var out []string
		for _, e := range logs.All() {
			if strings.Contains(e.Message, "of traffic") {
				out = append(out, e.Message)
			}
		}
		return out
	}
	clock = clock.Add(30 * time.Second)
	s.Tick(clock) // released and judged: the minute starts
	if got := said(); len(got) != 0 {
		t.Fatalf("warned before a minute of traffic: %q", got)
	}
	clock = clock.Add(time.Minute)
	s.Tick(clock)
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counted := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			for _, dp := range mt.Data.(metricdata.Sum[int64]).DataPoints {
				v, _ := dp.Attributes.Value(attribute.Key(AttrSuspect))
				counted[v.AsString()] += dp.Value
			}
		}
	}
	return said(), counted
}

// The look waits for every worker's tally: a predicate that held in a batch
// of one worker, not yet flushed when another worker's batch passes the
// first minute, is not said never to have held; one that held nowhere is,
// once both have flushed past the minute.
func TestTypoLookWaitsForEveryWorker(t *testing.T) {
	pcfg := predicate.Config{Predicates: predicate.List{
		{Name: "stir", Predicate: predicate.Predicate{Tool: "stir"}},
		{Name: "strir", Predicate: predicate.Predicate{Tool: "strir"}},
	}}
	core, logs := observer.New(zapcore.WarnLevel)
	warnings := NewWarnings(zap.New(core))
	typos := nopMetrics().SuspectedTypos
	watch := newPredicateWatch([]string{"stir", "strir"}, 0, nil)
	tw := newTypoWatch(Config{WarnTyposAfter: time.Minute, Literals: pcfg.Literals(), GroupBy: sequence.ByTraceID}, 2)
	start := time.Unix(1_800_000_000, 0)
	td := fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "stir"})
	tw.note(start, td, 1, watch) // worker 1 judges a stir, its tally not yet flushed
	ctx := context.Background()
	tw.look(ctx, 0, start.Add(time.Minute), watch, typos, warnings) // worker 0, past the minute
	if n := logs.Len(); n != 0 {
		t.Fatalf("warned while worker 1's tally was not flushed: %v", logs.All())
	}
	onWorker1 := watch.newTally()
	onWorker1.add(1) // stir held
	watch.flush(ctx, &onWorker1, nopMetrics().PredicateHeld, warnings)
	tw.look(ctx, 1, start.Add(time.Minute+time.Second), watch, typos, warnings)
	var said []string
	for _, e := range logs.All() {
		said = append(said, e.Message)
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "predicate strir has not held once") {
		t.Errorf("warnings %q, want strir's alone", said)
	}
}
