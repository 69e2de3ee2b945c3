// SPDX-License-Identifier: Apache-2.0

// Package e2e runs the project's collector in-process for end-to-end tests:
// otelcol.NewCollector with the distribution's agentguard components, on a
// configuration file the examples ship, its OTLP/HTTP receiver on a free
// loopback port and its verdict logs sent to a loopback log sink.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/agentguard/agentguard/connector/verdictlogs"
	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/processor/probguard"
	"github.com/agentguard/agentguard/processor/temporalcheck"
	"github.com/agentguard/agentguard/test/harness"
)

// Factories are the components the examples' configurations use.
func Factories() (otelcol.Factories, error) {
	var f otelcol.Factories
	var err error
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory()); err != nil {
		return f, err
	}
	if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](temporalcheck.NewFactory(), probguard.NewFactory()); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](debugexporter.NewFactory(), otlphttpexporter.NewFactory()); err != nil {
		return f, err
	}
	if f.Extensions, err = otelcol.MakeFactoryMap[extension.Factory](riskendpoint.NewFactory()); err != nil {
		return f, err
	}
	f.Telemetry = otelconftelemetry.NewFactory()
	f.Connectors, err = otelcol.MakeFactoryMap[connector.Factory](verdictlogs.NewFactory())
	return f, err
}

// StartCollector runs the configuration files (merged in order, as the
// collector's repeated --config does) in-process until the test ends, with
// AGENTGUARD_OTLP_HTTP set to a free loopback address, which it returns, and
// AGENTGUARD_VERDICTS_ENDPOINT to the sink. Its own metrics are served on
// another free loopback port, not the collector's default :8888, which a
// test running beside it (or anything else) may hold.
func StartCollector(t *testing.T, sink *harness.LogSink, configs ...string) string {
	t.Helper()
	addr := FreeAddr(t)
	t.Setenv("AGENTGUARD_OTLP_HTTP", addr)
	t.Setenv("AGENTGUARD_VERDICTS_ENDPOINT", sink.Endpoint())
	uris := make([]string, 0, len(configs)+1)
	for _, c := range configs {
		uris = append(uris, "file:"+c)
	}
	telemetry := filepath.Join(t.TempDir(), "telemetry.yaml")
	if err := os.WriteFile(telemetry, []byte(harness.TelemetryConfig(FreeAddr(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	uris = append(uris, "file:"+telemetry)
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: component.NewDefaultBuildInfo(),
		Factories: Factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs:              uris,
			ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
			DefaultScheme:     "env",
		}},
		DisableGracefulShutdown: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- col.Run(context.Background()) }()
	t.Cleanup(func() {
		col.Shutdown()
		if err := <-done; err != nil {
			t.Errorf("collector: %v", err)
		}
	})
	for deadline := time.Now().Add(20 * time.Second); col.GetState() != otelcol.StateRunning; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("collector state %v after 20s", col.GetState())
		}
	}
	return addr
}

// FreeAddr is a loopback address no one listens on.
func FreeAddr(t *testing.T) string {
	t.Helper()
	addrs, err := harness.FreeAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	return addrs[0]
}

// Requests reads an OTLP/JSON trace file as agentguard check does: one
// ExportTraceServiceRequest, or one per line.
func Requests(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			lines = append(lines, l)
		}
	}
	for _, l := range lines {
		if !json.Valid(l) {
			return [][]byte{b} // one pretty-printed document
		}
	}
	return lines
}

// Post sends one OTLP/JSON request to the collector's OTLP/HTTP receiver, as
// an SDK's exporter does, and returns when the receiver accepted it: the
// spans' receipt.
func Post(addr string, body []byte) (time.Time, error) {
	return harness.PostTraces(addr, "application/json", body)
}
