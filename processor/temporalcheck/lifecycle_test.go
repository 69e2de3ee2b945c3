// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/internal/selfmetric/selfmetrictest"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// collect reads what the processor recorded, and fails t on every way it
// disagrees with metadata.yaml: a metric, attribute key or value it does not
// declare.
func collect(t *testing.T, reader *sdkmetric.ManualReader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	selfmetrictest.CheckRecorded(t, "metadata.yaml", metadata.ScopeName, rm)
	return rm
}

// The processor as a collector drives it: created by its factory from a
// testdata config, started, fed a real recorded trace, shut down (which
// releases what it holds). Every span leaves, the violation is written, and
// the self-metrics are the declared ones; goleak (package_test.go) finds any
// goroutine left behind.
func TestLifecycle(t *testing.T) {
	for _, name := range []string{"paper", "conversation"} {
		t.Run(name, func(t *testing.T) {
			cfg, err := loadConfig(t, name)
			if err != nil {
				t.Fatal(err)
			}
			set, reader := meteredSettings()
			sink := new(consumertest.TracesSink)
			ctx := context.Background()
			p, err := NewFactory().CreateTraces(ctx, set, cfg, sink)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Start(ctx, componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}
			td := fixtures.Traces(t, "adk-weather/adk-bad-43-0.json")
			in := td.SpanCount()
			if err := p.ConsumeTraces(ctx, td); err != nil {
				t.Fatal(err)
			}
			if err := p.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if sink.SpanCount() != in {
				t.Errorf("%d spans in, %d out", in, sink.SpanCount())
			}
			if got := verdictsOf(sink); name == "paper" && !slices.Equal(got, []string{"te1 failure 1/3 on execute_tool transfer_to_agent"}) {
				t.Errorf("verdicts %v", got)
			}
			if rm := collect(t, reader); len(rm.ScopeMetrics) == 0 {
				t.Error("no self-metrics recorded")
			}
		})
	}
}

// A processor created and shut down without being started (the collector
// does this when another component fails to start) returns no error and
// leaves nothing running.
func TestShutdownWithoutStart(t *testing.T) {
	cfg, err := loadConfig(t, "paper")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
