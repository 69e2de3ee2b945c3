// SPDX-License-Identifier: Apache-2.0

package verdictlogs

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/connector/verdictlogs/internal/metadata"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// countBatches runs the metrics side over each batch in turn and returns
// what it emitted.
func countBatches(t *testing.T, cfg *Config, batches ...ptrace.Traces) []pmetric.Metrics {
	t.Helper()
	sink := new(consumertest.MetricsSink)
	c, err := NewFactory().CreateTracesToMetrics(context.Background(), connectortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	for _, td := range batches {
		if err := c.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return sink.AllMetrics()
}

// metricNamed is the metric of that name in md's one scope.
func metricNamed(t *testing.T, md pmetric.Metrics, name string) pmetric.Metric {
	t.Helper()
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for _, m := range ms.All() {
		if m.Name() == name {
			return m
		}
	}
	t.Fatalf("no metric %s", name)
	return pmetric.Metric{}
}

// te1's failure on the paper's run is counted under its assertion, service
// and label, its exemplar the failing span; the total is cumulative.
func TestVerdictsBecomeCumulativeCounts(t *testing.T) {
	out := countBatches(t, createDefaultConfig(), annotated(t), annotated(t))
	if len(out) != 2 {
		t.Fatalf("%d batches of metrics, want one per batch of spans", len(out))
	}
	for i, md := range out {
		sum := metricNamed(t, md, MetricVerdicts).Sum()
		if !sum.IsMonotonic() || sum.AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
			t.Fatalf("not a cumulative monotonic sum: %v", sum.AggregationTemporality())
		}
		fail := pointWith(t, sum.DataPoints(), verdictattr.LabelFail)
		if fail.IntValue() != int64(i+1) {
			t.Errorf("batch %d: %d failures counted, want %d", i, fail.IntValue(), i+1)
		}
		want := map[string]any{AttrCheck: "temporalcheck", AttrAssertion: "te1", AttrServiceName: "weather-agents", AttrLabel: "fail"}
		if got := fail.Attributes().AsRaw(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("attributes %v, want %v", got, want)
		}
		ex := fail.Exemplars().At(0)
		if ex.TraceID() != (pcommon.TraceID{1}) || ex.SpanID() != (pcommon.SpanID{3}) {
			t.Errorf("exemplar %v/%v, want the failing span's", ex.TraceID(), ex.SpanID())
		}
	}
}

func pointWith(t *testing.T, dps pmetric.NumberDataPointSlice, label string) pmetric.NumberDataPoint {
	t.Helper()
	for _, dp := range dps.All() {
		if v, _ := dp.Attributes().Get(AttrLabel); v.Str() == label {
			return dp
		}
	}
	t.Fatalf("no point with label %s", label)
	return pmetric.NumberDataPoint{}
}

// probguard's risk is counted and its P_safe put in the histogram's bucket
// (0.9685: above 0.95, at most 0.99), with the span as exemplar; the
// unknown state, without a P_safe, is counted only.
func TestProbguardDecisionsAndPSafe(t *testing.T) {
	g := stoveGuard(t)
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "stove")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i, bits := range []uint64{0b10, 0b01} {
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{7})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
		g.Annotate(sp, g.Step(&guard.Run{}, bits), "episode-1", 1)
	}
	out := countBatches(t, createDefaultConfig(), td)
	counts := metricNamed(t, out[0], MetricVerdicts).Sum().DataPoints()
	if pointWith(t, counts, verdictattr.LabelRisk).IntValue() != 1 || pointWith(t, counts, verdictattr.LabelUnknownState).IntValue() != 1 {
		t.Error("the risk and the unknown state are not counted once each")
	}
	hist := metricNamed(t, out[0], MetricPSafe).Histogram()
	if hist.DataPoints().Len() != 1 {
		t.Fatalf("%d P_safe series, want 1", hist.DataPoints().Len())
	}
	dp := hist.DataPoints().At(0)
	if dp.Count() != 1 || dp.BucketCounts().At(10) != 1 || dp.Exemplars().At(0).SpanID() != (pcommon.SpanID{1}) {
		t.Errorf("count %d, buckets %v, exemplar %v", dp.Count(), dp.BucketCounts().AsRaw(), dp.Exemplars().At(0).SpanID())
	}
	if a := dp.Attributes().AsRaw(); a[AttrAssertion] != "always_safe" || a[AttrServiceName] != "stove" || a[AttrLabel] != nil {
		t.Errorf("attributes %v", a)
	}
}

// conversation is one conversation's batch: its verdicts as the processors
// write them, each on a span of its own trace, the group key its own.
func conversation(i int, service string, verdicts [][2]string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	rs.Resource().Attributes().PutStr("service.instance.id", fmt.Sprint("pod-", i%97))
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for j, v := range verdicts {
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{byte(i), byte(i >> 8), byte(j)})
		sp.SetSpanID(pcommon.SpanID{byte(i), byte(i >> 8), byte(j), 1})
		ev := sp.Events().AppendEmpty()
		ev.SetName(verdictattr.EvaluationEvent)
		a := ev.Attributes()
		a.PutStr(verdictattr.Check, verdictattr.CheckTemporal)
		a.PutStr(verdictattr.EvaluationName, v[0])
		a.PutStr(verdictattr.ScoreLabel, v[1])
		a.PutStr(verdictattr.Group, fmt.Sprint("conversation-", i))
		if i%10 == 0 {
			a.PutStr(verdictattr.History, verdictattr.HistoryPartial)
		}
	}
	return td
}

// 10 000 conversations of 2 services, each with verdicts of 3 assertions
// of 2 labels, some marked partial: the series stay within assertions ×
// services × labels × history marks (3 × 2 × 2 × 2), every verdict counted.
func TestSeriesBoundedWhateverTheConversations(t *testing.T) {
	const conversations = 10000
	assertions, labels := []string{"te1", "te2", "te3"}, []string{verdictattr.LabelFail, verdictattr.LabelPass}
	var batches []ptrace.Traces
	for i := range conversations {
		var vs [][2]string
		for k, a := range assertions {
			vs = append(vs, [2]string{a, labels[(i+k)%len(labels)]})
		}
		batches = append(batches, conversation(i, []string{"weather", "travel"}[i%2], vs))
	}
	series, total := map[string]int64{}, int64(0)
	for _, md := range countBatches(t, createDefaultConfig(), batches...) {
		for _, dp := range metricNamed(t, md, MetricVerdicts).Sum().DataPoints().All() {
			series[fmt.Sprint(dp.Attributes().AsRaw())] = dp.IntValue() // the latest total
		}
	}
	for _, n := range series {
		total += n
	}
	if bound := len(assertions) * 2 * len(labels) * 2; len(series) > bound {
		t.Errorf("%d series for %d conversations, want at most %d", len(series), conversations, bound)
	}
	if total != conversations*int64(len(assertions)) {
		t.Errorf("%d verdicts counted, want %d", total, conversations*len(assertions))
	}
}

// Past metrics.max_series, a new series' verdicts go to the overflow
// series; the known series go on counting.
func TestSeriesPastTheBoundOverflow(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Metrics.MaxSeries = 2
	out := countBatches(t, cfg,
		conversation(1, "a", [][2]string{{"te1", "fail"}, {"te2", "fail"}}),
		conversation(3, "a", [][2]string{{"te3", "fail"}, {"te4", "fail"}, {"te1", "fail"}}))
	last := metricNamed(t, out[1], MetricVerdicts).Sum().DataPoints()
	got := map[string]int64{}
	for _, dp := range last.All() {
		a := dp.Attributes().AsRaw()
		got[fmt.Sprintf("%v %v", a[AttrAssertion], a[AttrOverflow])] = dp.IntValue()
	}
	want := map[string]int64{"te1 <nil>": 2, "<nil> true": 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("second batch's points %v, want %v", got, want)
	}
}

// A batch without verdicts, or with verdicts of checks not configured,
// emits no metrics.
func TestNoVerdictsNoMetrics(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Checks = []string{verdictattr.CheckProb}
	if out := countBatches(t, cfg, ptrace.NewTraces(), annotated(t)); len(out) != 0 {
		t.Errorf("%d batches of metrics", len(out))
	}
}
