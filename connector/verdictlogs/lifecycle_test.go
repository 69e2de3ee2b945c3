// SPDX-License-Identifier: Apache-2.0

package verdictlogs

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentguard/agentguard/connector/verdictlogs/internal/metadata"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/internal/selfmetric/selfmetrictest"
	"github.com/agentguard/agentguard/processor/temporalcheck"
)

// checked is a real recorded trace after the temporalcheck processor, as a
// collector pipeline would hand it to the connector: te1's violation written
// on the span that decided it.
func checked(t *testing.T, file string) ptrace.Traces {
	t.Helper()
	cm, err := confmaptest.LoadConf("testdata/temporalcheck.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := temporalcheck.NewFactory()
	cfg := f.CreateDefaultConfig()
	if err := cm.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	sink := new(consumertest.TracesSink)
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := p.ConsumeTraces(ctx, fixtures.Traces(t, file)); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if len(sink.AllTraces()) != 1 {
		t.Fatalf("the processor passed on %d batches", len(sink.AllTraces()))
	}
	return sink.AllTraces()[0]
}

// The connector as a collector drives it: created by its factory with the
// default config, started, fed real traces (one as recorded, without
// verdicts, one after the temporalcheck processor), shut down. The verdict
// becomes one WARN record, the plain trace none, and the self-metrics are the
// declared ones; goleak (package_test.go) finds any goroutine left behind.
func TestLifecycle(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	set := connectortest.NewNopSettings(metadata.Type)
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	sink := new(consumertest.LogsSink)
	ctx := context.Background()
	c, err := NewFactory().CreateTracesToLogs(ctx, set, NewFactory().CreateDefaultConfig(), sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := c.ConsumeTraces(ctx, fixtures.Traces(t, "adk-weather/adk-good-42-0.json")); err != nil {
		t.Fatal(err)
	}
	if err := c.ConsumeTraces(ctx, checked(t, "adk-weather/adk-bad-43-0.json")); err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := sink.LogRecordCount(); n != 1 {
		t.Fatalf("%d records, want te1's violation alone", n)
	}
	lr := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	if lr.SeverityNumber() != plog.SeverityNumberWarn || lr.SeverityText() != metadata.SeverityWarn {
		t.Errorf("severity %v %q", lr.SeverityNumber(), lr.SeverityText())
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) == 0 {
		t.Error("no self-metrics recorded")
	}
	selfmetrictest.CheckRecorded(t, "metadata.yaml", metadata.ScopeName, rm)
}
