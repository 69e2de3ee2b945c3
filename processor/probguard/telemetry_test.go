// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// meteredSettings are processor settings whose self-metrics the reader
// collects.
func meteredSettings() (processor.Settings, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	set := nopSettings()
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	return set, reader
}

// metricsOf reads the processor's instruments: counters and gauges by name
// and attribute, summed; histograms by their count.
func metricsOf(t *testing.T, r *sdkmetric.ManualReader) map[string]float64 {
	rm := collect(t, r) // and held to metadata.yaml
	out := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					out[m.Name+key(dp.Attributes.ToSlice())] += float64(dp.Value)
				}
			case metricdata.Gauge[int64]:
				for _, dp := range d.DataPoints {
					out[m.Name+key(dp.Attributes.ToSlice())] = float64(dp.Value)
				}
			case metricdata.Gauge[float64]:
				for _, dp := range d.DataPoints {
					out[m.Name] = dp.Value
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					out[m.Name] += float64(dp.Count)
				}
			}
		}
	}
	return out
}

func key(kvs []attribute.KeyValue) string {
	s := ""
	for _, kv := range kvs {
		s += "{" + string(kv.Key) + "=" + kv.Value.String() + "}"
	}
	return s
}

// Interventions by kind, the P_safe of every scored event, unknown states,
// the PAC status of both models, the model writes and the model's age.
func TestSelfMetrics(t *testing.T) {
	set, reader := meteredSettings()
	cfg := stoveConfig(t)
	cfg.Learn = &LearnConfig{Output: filepath.Join(t.TempDir(), "online.json")}
	p, _ := newTestProcessor(t, cfg, set)
	feed(t, p, fixtures.StoveTrace(0, "",
		fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"}, fixtures.ToolCall{Tool: "stir", Fork: true},
		fixtures.ToolCall{Tool: "turn_off_stove", Fork: true}, fixtures.ToolCall{Tool: "look", Fork: true}))
	shutdown(t, p)

	got := metricsOf(t, reader)
	for name, want := range map[string]float64{
		"otelcol_processor_probguard_interventions{kind=risk}{property=always_safe}":          1,
		"otelcol_processor_probguard_interventions{kind=violation}{property=always_safe}":     1,
		"otelcol_processor_probguard_interventions{kind=unknown_state}{property=always_safe}": 1,
		"otelcol_processor_probguard_unknown_states":                                          2,
		"otelcol_processor_probguard_p_safe":                                                  3,
		"otelcol_processor_probguard_pac_certified{model=served}":                             0,
		"otelcol_processor_probguard_pac_certified{model=learned}":                            0,
		"otelcol_processor_probguard_model_writes{result=ok}":                                 1,
		"otelcol_processor_probguard_traces_held":                                             0,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	if _, ok := got["otelcol_processor_probguard_model_age"]; !ok {
		t.Errorf("no model age in %v", got)
	}
}

// Past max_traces, traces are scored early (when_complete: on arrival no
// trace is held by trace ID) and groups ended early: counted, and every
// span still passes.
func TestBoundsAreCountedAndLoseNothing(t *testing.T) {
	for _, score := range []Score{ScoreWhenComplete, ScoreOnArrival} {
		set, reader := meteredSettings()
		cfg := stoveConfig(t)
		cfg.MaxTraces, cfg.Score = 2, score
		p, sink := newTestProcessor(t, cfg, set)
		in := 0
		for n := range 10 {
			in += feed(t, p, fixtures.V2Trace(n))
			p.Sync()
			if n := p.OpenGroups(); n > 2 {
				t.Fatalf("%s: %d open groups past max_traces 2", score, n)
			}
		}
		shutdown(t, p)
		if out := sink.SpanCount(); out != in {
			t.Errorf("%s: %d spans in, %d out", score, in, out)
		}
		got := metricsOf(t, reader)
		if evicted := got["otelcol_processor_probguard_traces_released_early{reason=evicted}"]; (evicted == 0) != (score == ScoreOnArrival) {
			t.Errorf("%s: %v traces released early: %v", score, evicted, got)
		}
		if got["otelcol_processor_probguard_groups_ended_early{reason=max_traces}"] == 0 {
			t.Errorf("%s: early group ends not counted: %v", score, got)
		}
	}
}

// A refusal downstream marked permanent is counted and logged, not
// returned: the spans were accepted, and a sender that retried would send
// them twice. (A refusal that is not permanent is retried: the stage's
// tests.)
func TestPermanentRefusalDownstreamIsCountedNotReturned(t *testing.T) {
	set, reader := meteredSettings()
	cfg := stoveConfig(t)
	cfg.MaxTraces = 1 // the second trace forces the first out, through the failing consumer
	pt, err := NewFactory().CreateTraces(context.Background(), set, cfg, consumertest.NewErr(consumererror.NewPermanent(errors.New("malformed"))))
	if err != nil {
		t.Fatal(err)
	}
	for n := range 2 {
		if err := pt.ConsumeTraces(context.Background(), fixtures.V2Trace(n)); err != nil {
			t.Fatalf("trace %d: %v", n, err)
		}
	}
	if err := pt.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := metricsOf(t, reader)["otelcol_processor_probguard_forward_failures"]; got != 2 {
		t.Errorf("forward failures %v, want 2", got)
	}
}
