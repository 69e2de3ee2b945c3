// SPDX-License-Identifier: Apache-2.0

//go:build e2e

// End-to-end: the collector runs in-process (otelcol.NewCollector with the
// project's factories) on the very configuration the demo uses; the
// simulator's spans reach it over OTLP/HTTP on a free loopback port; the
// verdicts come back as log records over OTLP/HTTP.
package e2e_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/test/e2e"
	"github.com/agentguard/agentguard/test/harness"
	"github.com/agentguard/agentguard/test/sim/weather"
)

func play(t *testing.T, addr string, convs []weather.Conversation) {
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

func violations(sink *harness.LogSink) []string {
	var out []string
	for _, r := range sink.Records() {
		a := r.Attributes().AsRaw()
		out = append(out, fmt.Sprintf("%s %s %d-%d %s", a[verdictattr.Group], a[verdictattr.EvaluationName],
			a[verdictattr.StartEvent], a[verdictattr.EndEvent], r.SeverityText()))
	}
	slices.Sort(out)
	return out
}

// Each mistake is reported, the greeting agent that keeps control when its
// conversation ends (group_timeout after its last turn, shortened here as the
// demo does: these users do not pause).
func TestWeakProfileViolationsReachTheLogs(t *testing.T) {
	sink, err := harness.StartLogSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	t.Setenv("AGENTGUARD_GROUP_TIMEOUT", "1s")
	addr := e2e.StartCollector(t, sink, weatherConfig)
	convs := []weather.Conversation{
		{ID: "bad-hello", Profile: weather.Weak, BadHello: true},
		{ID: "bad-goodbye", Profile: weather.Weak, BadGoodbye: true},
		{ID: "keeps-control", Profile: weather.Weak, KeepsControl: true},
		{ID: "fine", Profile: weather.Weak},
	}
	play(t, addr, convs)
	want := []string{"bad-goodbye te2 5-7 WARN", "bad-hello te1 1-3 WARN", "bad-hello te1 3-4 WARN", "keeps-control te1 1-2 WARN"}
	sink.WaitFor(len(want), 15*time.Second)
	sink.WaitQuiet(time.Second, 5*time.Second)
	if got := violations(sink); !slices.Equal(got, want) {
		t.Fatalf("verdict logs %v, want %v", got, want)
	}
}

func TestStrongProfileIsClean(t *testing.T) {
	sink, err := harness.StartLogSink()
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	addr := e2e.StartCollector(t, sink, weatherConfig)
	r := rand.New(rand.NewPCG(1, 1))
	var convs []weather.Conversation
	for i := range 10 {
		convs = append(convs, weather.NewConversation(fmt.Sprintf("strong-%d", i), weather.Strong, r))
	}
	play(t, addr, convs)
	// te1..te3 resolve within 2s (wait) of the last span; leave room for it.
	time.Sleep(3 * time.Second)
	if got := violations(sink); len(got) != 0 {
		t.Fatalf("violations on the strong profile: %v", got)
	}
}
