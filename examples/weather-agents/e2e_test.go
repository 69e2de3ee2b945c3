// End-to-end: the collector runs in-process (otelcol.NewCollector with the
// project's factories) on the very configuration the demo uses; the
// simulator's spans reach it over OTLP/HTTP on a free loopback port; the
// verdicts come back as log records over OTLP/HTTP.
package weatheragents_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
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
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentguard/agentguard/connector/verdictlogs"
	"github.com/agentguard/agentguard/examples/weather-agents/logsink"
	"github.com/agentguard/agentguard/examples/weather-agents/sim"
	"github.com/agentguard/agentguard/processor/temporalcheck"
)

func factories() (otelcol.Factories, error) {
	var f otelcol.Factories
	var err error
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory()); err != nil {
		return f, err
	}
	if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](temporalcheck.NewFactory()); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](debugexporter.NewFactory(), otlphttpexporter.NewFactory()); err != nil {
		return f, err
	}
	f.Telemetry = otelconftelemetry.NewFactory()
	f.Connectors, err = otelcol.MakeFactoryMap[connector.Factory](verdictlogs.NewFactory())
	return f, err
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startCollector runs collector.yaml in-process and returns its OTLP/HTTP address.
func startCollector(t *testing.T, sink *logsink.Sink) string {
	addr := freeAddr(t)
	t.Setenv("AGENTGUARD_OTLP_HTTP", addr)
	t.Setenv("AGENTGUARD_VERDICTS_ENDPOINT", "http://"+sink.Addr()+"/v1/logs")
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: component.NewDefaultBuildInfo(),
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs:              []string{"file:collector.yaml"},
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

func play(t *testing.T, addr string, convs []sim.Conversation) {
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	for i, c := range convs {
		c.Play(ctx, tp, time.Now().Add(time.Duration(i)*time.Second))
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

func violations(sink *logsink.Sink) []string {
	var out []string
	for _, r := range sink.Records() {
		a := r.Attributes().AsRaw()
		out = append(out, fmt.Sprintf("%s %s %d-%d %s", a["agentguard.group"], a["gen_ai.evaluation.name"],
			a["agentguard.start_event"], a["agentguard.end_event"], r.SeverityText()))
	}
	slices.Sort(out)
	return out
}

func TestWeakProfileViolationsReachTheLogs(t *testing.T) {
	sink, err := logsink.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	addr := startCollector(t, sink)
	convs := []sim.Conversation{
		{ID: "bad-hello", Profile: sim.Weak, BadHello: true},
		{ID: "bad-goodbye", Profile: sim.Weak, BadGoodbye: true},
		{ID: "fine", Profile: sim.Weak},
	}
	play(t, addr, convs)
	sink.WaitQuiet(time.Second, 15*time.Second)
	want := []string{"bad-goodbye te2 5-7 WARN", "bad-hello te1 1-3 WARN", "bad-hello te1 3-4 WARN"}
	if got := violations(sink); !slices.Equal(got, want) {
		t.Fatalf("verdict logs %v, want %v", got, want)
	}
}

func TestStrongProfileIsClean(t *testing.T) {
	sink, err := logsink.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	addr := startCollector(t, sink)
	r := rand.New(rand.NewPCG(1, 1))
	var convs []sim.Conversation
	for i := range 10 {
		convs = append(convs, sim.NewConversation(fmt.Sprintf("strong-%d", i), sim.Strong, r))
	}
	play(t, addr, convs)
	// te1..te3 resolve within 2s (wait) of the last span; leave room for it.
	time.Sleep(3 * time.Second)
	if got := violations(sink); len(got) != 0 {
		t.Fatalf("violations on the strong profile: %v", got)
	}
}
