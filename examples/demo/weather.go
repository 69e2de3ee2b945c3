package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"

	"github.com/agentguard/agentguard/examples/weather-agents/sim"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

func conversations(strong, weak int, seed uint64) []sim.Conversation {
	r := rand.New(rand.NewPCG(seed, seed))
	var out []sim.Conversation
	for i := range strong {
		out = append(out, sim.NewConversation(fmt.Sprintf("strong-%02d", i+1), sim.Strong, r))
	}
	for i := range weak {
		out = append(out, sim.NewConversation(fmt.Sprintf("weak-%02d", i+1), sim.Weak, r))
	}
	return out
}

// play sends the conversations' traces with the OpenTelemetry SDK over
// OTLP/HTTP, as an instrumented agent would.
func play(addr string, convs []sim.Conversation) error {
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(addr), otlptracehttp.WithInsecure())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("weather_agent_team"))))
	base := time.Now()
	for i, c := range convs {
		c.Play(ctx, tp, base.Add(time.Duration(i)*time.Second))
	}
	return tp.Shutdown(ctx)
}

// summarizeWeather prints, per conversation, what went wrong and what the
// collector reported, then the first violation in full.
func summarizeWeather(w io.Writer, convs []sim.Conversation, recs []plog.LogRecord) {
	byGroup := map[string][]plog.LogRecord{}
	for _, r := range recs {
		g, _ := r.Attributes().Get(verdictattr.Group)
		byGroup[g.Str()] = append(byGroup[g.Str()], r)
	}
	caught, missed, falseAlarms := 0, 0, 0
	for _, c := range convs {
		names := assertionNames(byGroup[c.ID])
		mistake := "behaved"
		switch {
		case c.BadHello:
			mistake = "greeting agent kept control"
		case c.BadGoodbye:
			mistake = "farewell agent kept control"
		}
		fmt.Fprintf(w, "  %-9s %-28s violations: %s\n", c.ID, mistake, orNone(names))
		switch {
		case c.Faulty() && len(names) > 0:
			caught++
		case c.Faulty():
			missed++
		case len(names) > 0:
			falseAlarms++
		}
	}
	fmt.Fprintf(w, "\n%d verdict log records; faulty conversations caught: %d, missed: %d; false alarms: %d\n", len(recs), caught, missed, falseAlarms)
	if len(recs) > 0 {
		fmt.Fprintf(w, "\nfirst violation, as the log record's body says:\n%s", indent(recs[0].Body().Str()))
	}
}

func assertionNames(recs []plog.LogRecord) []string {
	var names []string
	for _, r := range recs {
		n, _ := r.Attributes().Get(verdictattr.EvaluationName)
		s, _ := r.Attributes().Get(verdictattr.StartEvent)
		e, _ := r.Attributes().Get(verdictattr.EndEvent)
		names = append(names, fmt.Sprintf("%s (events %d-%d)", n.Str(), s.Int(), e.Int()))
	}
	sort.Strings(names)
	return names
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}
