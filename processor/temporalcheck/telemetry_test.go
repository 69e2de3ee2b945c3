// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// meteredSettings are processor settings whose self-metrics the reader
// collects.
func meteredSettings() (processor.Settings, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	set := processortest.NewNopSettings(metadata.Type)
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	return set, reader
}

// sums reads the processor's counters: metric name -> total.
func sums(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range s.DataPoints {
					out[m.Name] += dp.Value
				}
			}
		}
	}
	return out
}

// Every decision not taken is counted: late spans, early releases, and the
// verdicts themselves.
func TestSelfMetricsCount(t *testing.T) {
	set, reader := meteredSettings()
	cfg, err := loadConfig(t, "paper")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxTraces, cfg.Workers = 1, 1
	sink := new(consumertest.TracesSink)
	pt, err := NewFactory().CreateTraces(context.Background(), set, cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	p := pt.(*temporalProcessor)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	p.UseClock(clock.now)

	batches := splitSpans(rand.New(rand.NewPCG(2, 2)), fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"))
	feed(t, p, batches[0])
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-good-42-0.json")) // evicts the bad trace: released early
	clock.t = clock.t.Add(time.Minute)
	p.Tick(clock.t)
	late := feed(t, p, batches[1:]...) // the bad trace's other spans: late
	shutdown(t, p)

	got := sums(t, reader)
	collect(t, reader) // the early release's reason among them
	if got["otelcol_processor_temporalcheck_traces_released_early"] != 1 {
		t.Errorf("released early %d, want 1", got["otelcol_processor_temporalcheck_traces_released_early"])
	}
	if got["otelcol_processor_temporalcheck_late_spans"] != int64(late) {
		t.Errorf("late spans %d, want %d", got["otelcol_processor_temporalcheck_late_spans"], late)
	}
	if got["otelcol_processor_temporalcheck_verdicts"] == 0 || got["otelcol_processor_temporalcheck_traces_held"] != 0 {
		t.Errorf("verdicts %d, traces held %d", got["otelcol_processor_temporalcheck_verdicts"], got["otelcol_processor_temporalcheck_traces_held"])
	}
}

// A trace judged at a shutdown before its root span came is a trace released
// early (reason shutdown): its verdicts miss what was still to come. One
// whose root came is not.
func TestShutdownBeforeTheRootIsAnEarlyRelease(t *testing.T) {
	set, reader := meteredSettings()
	cfg, err := loadConfig(t, "paper")
	if err != nil {
		t.Fatal(err)
	}
	pt, err := NewFactory().CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	if err != nil {
		t.Fatal(err)
	}
	p := pt.(*temporalProcessor)
	whole := fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "stir"})
	cut := fixtures.StoveTrace(1, "", fixtures.ToolCall{Tool: "stir"})
	cut.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() })
	feed(t, p, whole, cut)
	shutdown(t, p)
	var reasons []string
	for _, sm := range collect(t, reader).ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "otelcol_processor_temporalcheck_traces_released_early" {
				for _, dp := range s.DataPoints {
					reason, _ := dp.Attributes.Value("reason")
					reasons = append(reasons, fmt.Sprintf("%s=%d", reason.AsString(), dp.Value))
				}
			}
		}
	}
	if len(reasons) != 1 || reasons[0] != "shutdown=1" {
		t.Errorf("released early %v, want shutdown=1 (the trace without its root)", reasons)
	}
}
