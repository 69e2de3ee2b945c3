// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/internal/selfmetric/selfmetrictest"
	"github.com/agentguard/agentguard/processor/probguard/internal/metadata"
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

// The processor as a collector drives it: created by its factory from the
// household example's config, started, fed a real LangGraph episode that
// leaves the stove on, shut down (which releases what it holds). Every span
// leaves, the risk and the violation are written, and the self-metrics are
// the declared ones; goleak (package_test.go) finds any goroutine left
// behind.
func TestLifecycle(t *testing.T) {
	cfg, err := loadConfig(t, "household")
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
	td := fixtures.Traces(t, "household-langgraph/ep-004.json")
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
	if got := annotations(sink); len(got) != 2 || !strings.HasPrefix(got[0], "go_to risk") || !strings.HasSuffix(got[1], " violation") {
		t.Errorf("annotations %q, want a risk on leaving, then the violation", got)
	}
	if rm := collect(t, reader); len(rm.ScopeMetrics) == 0 {
		t.Error("no self-metrics recorded")
	}
}

// A processor created and shut down without being started (the collector
// does this when another component fails to start) returns no error and
// leaves nothing running.
func TestShutdownWithoutStart(t *testing.T) {
	p, err := NewFactory().CreateTraces(context.Background(), nopSettings(), stoveConfig(t), consumertest.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
