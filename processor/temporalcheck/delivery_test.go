// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/internal/stage"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// observed builds an unstarted processor on a fake clock whose metrics and
// warnings the test reads.
func observed(t *testing.T, name string, edit func(*Config)) (*temporalProcessor, *consumertest.TracesSink, *fakeClock, *sdkmetric.ManualReader, *observer.ObservedLogs) {
	t.Helper()
	cfg, err := loadConfig(t, name)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(cfg)
	}
	set, reader := meteredSettings()
	core, logs := observer.New(zap.WarnLevel)
	set.Logger = zap.New(core)
	sink := new(consumertest.TracesSink)
	pt, err := NewFactory().CreateTraces(context.Background(), set, cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	p := pt.(*temporalProcessor)
	clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	p.UseClock(clock.now)
	return p, sink, clock, reader, logs
}

// A verdict decided after the group's spans left (an on_end fail at
// group_timeout) arrives on a verdict span: a child of the group's last
// event, in its trace, with the evaluation event a span-attached verdict has.
func TestEndOfGroupVerdictOnAVerdictSpan(t *testing.T) {
	p, sink, clock, reader, _ := observed(t, "paper", func(c *Config) {
		c.GroupBy = "gen_ai.conversation.id"
		c.Assertions = []assertion.Config{{Name: "answered", Always: "xferToWeather >> getWeather + ok", OnEnd: "fail"}}
	})
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-good-42-0.json"), fixtures.Traces(t, "adk-weather/adk-good-42-1.json"))
	clock.t = clock.t.Add(time.Minute)
	p.Tick(clock.t) // released and judged: the verdict is still pending
	if got := verdictsOf(sink); len(got) != 0 {
		t.Fatalf("verdicts before the group ended: %v", got)
	}
	var lastTool ptrace.Span
	for _, td := range sink.AllTraces() {
		eachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
			if sp.Name() == "execute_tool get_weather" {
				lastTool = sp
			}
		})
	}
	clock.t = clock.t.Add(time.Hour)
	p.Tick(clock.t) // the group ends idle
	shutdown(t, p)

	want := []string{"answered failure 3/4 on " + stage.VerdictSpanName}
	if got := verdictsOf(sink); !slices.Equal(got, want) {
		t.Fatalf("verdicts %v, want %v", got, want)
	}
	for _, td := range sink.AllTraces() {
		eachSpan(td, func(_ pcommon.Resource, sp ptrace.Span) {
			if sp.Name() != stage.VerdictSpanName {
				return
			}
			if sp.TraceID() != lastTool.TraceID() || sp.ParentSpanID() != lastTool.SpanID() {
				t.Errorf("verdict span in trace %v under %v, want under the last event %v/%v", sp.TraceID(), sp.ParentSpanID(), lastTool.TraceID(), lastTool.SpanID())
			}
			ev := sp.Events().At(0)
			if v, _ := ev.Attributes().Get(verdictattr.Explanation); !strings.Contains(v.Str(), "answered") {
				t.Errorf("explanation %q", v.Str())
			}
		})
	}
	if got := sums(t, reader)["otelcol_processor_temporalcheck_verdict_spans"]; got != 1 {
		t.Errorf("verdict_spans %d, want 1", got)
	}
}

// A misspelt agent name makes te1 pass silently: the predicate never holds
// and te1 is never triggered. Both are counted, and the predicate is
// logged once at WARN.
func TestSilentPredicateIsCountedAndWarned(t *testing.T) {
	p, _, _, reader, logs := observed(t, "paper", func(c *Config) {
		c.Predicates[0].TransferTo = "greeting_agnet"
		c.WarnUnheldAfter = 3
	})
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"), fixtures.Traces(t, "adk-weather/adk-bad-43-1.json"))
	shutdown(t, p)
	got := sums(t, reader)
	if got["otelcol_processor_temporalcheck_predicate_held"] == 0 {
		t.Errorf("no predicate counted: %v", got)
	}
	warned := logs.FilterMessageSnippet("has not held").FilterField(zap.String("predicate", "xferToGreeting"))
	if warned.Len() != 1 {
		t.Errorf("%d warnings about xferToGreeting, want 1: %v", warned.Len(), logs.All())
	}
	if logs.FilterMessageSnippet("has not held").FilterField(zap.String("predicate", "sayHello")).Len() != 0 {
		t.Error("a predicate that held was warned about")
	}
}

// te1 is triggered where xferToGreeting holds: once in the failing run.
func TestAssertionTriggeredCounted(t *testing.T) {
	p, _, _, reader, _ := observed(t, "paper", nil)
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"))
	shutdown(t, p)
	if got := sums(t, reader)["otelcol_processor_temporalcheck_assertion_triggered"]; got == 0 {
		t.Errorf("assertion_triggered %d", got)
	}
}

// Spans without a trace ID pass at once, counted, and do not change the
// verdicts of the other traces.
func TestSpansWithoutTraceIDPassUnjudged(t *testing.T) {
	p, sink, _, reader, logs := observed(t, "paper", nil)
	anonymous := fixtures.Traces(t, "adk-weather/adk-bad-43-0.json")
	n := 0
	eachSpan(anonymous, func(_ pcommon.Resource, sp ptrace.Span) { sp.SetTraceID(pcommon.TraceID{}); n++ })
	feed(t, p, anonymous)
	if sink.SpanCount() != n {
		t.Fatalf("%d of %d spans without a trace ID passed at once", sink.SpanCount(), n)
	}
	feed(t, p, fixtures.Traces(t, "adk-weather/adk-good-42-0.json"), fixtures.Traces(t, "adk-weather/adk-bad-43-1.json"))
	feed(t, p, anonymous) // emptied by the first feed: nothing
	shutdown(t, p)
	if got := verdictsOf(sink); len(got) != 0 {
		t.Errorf("verdicts %v: the anonymous spans changed the others' verdicts", got)
	}
	if got := sums(t, reader)["otelcol_processor_temporalcheck_spans_without_trace_id"]; got != int64(n) {
		t.Errorf("spans_without_trace_id %d, want %d", got, n)
	}
	if logs.FilterMessageSnippet("without a trace ID").Len() != 1 {
		t.Errorf("warnings %v", logs.All())
	}
}

func eachSpan(td ptrace.Traces, f func(pcommon.Resource, ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				f(rs.Resource(), sp)
			}
		}
	}
}
