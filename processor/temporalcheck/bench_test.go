package temporalcheck

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// withTraceID stamps every span of a copy of td with trace ID n, so that each
// iteration is a new trace.
func withTraceID(td ptrace.Traces, n int) ptrace.Traces {
	out := ptrace.NewTraces()
	td.CopyTo(out)
	id := pcommon.TraceID{0: byte(n), 1: byte(n >> 8), 2: byte(n >> 16), 3: byte(n >> 24), 15: 1}
	for _, rs := range out.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				sp.SetTraceID(id)
			}
		}
	}
	return out
}

// BenchmarkThroughput: the paper's configuration over the ADK failing run,
// beside a processor that only passes batches on, in the same run. One op is
// one trace; ns/span and spans/s are what to compare.
func BenchmarkThroughput(b *testing.B) {
	tmpl := fixtures.Traces(b, "adk-weather/adk-bad-43-0.json")
	spans := tmpl.SpanCount()
	b.Run("passthrough", func(b *testing.B) {
		p, err := processorhelper.NewTraces(context.Background(), processortest.NewNopSettings(metadata.Type), &Config{},
			consumerNop{}, func(_ context.Context, td ptrace.Traces) (ptrace.Traces, error) { return td, nil })
		if err != nil {
			b.Fatal(err)
		}
		runThroughput(b, tmpl, spans, p.ConsumeTraces, func() {})
	})
	b.Run("temporalcheck", func(b *testing.B) {
		cfg, err := loadConfig(&testing.T{}, "paper")
		if err != nil {
			b.Fatal(err)
		}
		pt, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumerNop{})
		if err != nil {
			b.Fatal(err)
		}
		p := pt.(*temporalProcessor)
		clock := time.Unix(1_800_000_000, 0)
		p.now = func() time.Time { return clock }
		runThroughput(b, tmpl, spans, p.ConsumeTraces, func() {
			clock = clock.Add(time.Minute)
			p.forward(context.Background(), p.expire())
		})
	})
}

func runThroughput(b *testing.B, tmpl ptrace.Traces, spans int, consume func(context.Context, ptrace.Traces) error, release func()) {
	b.ReportAllocs()
	for i := range b.N {
		if err := consume(context.Background(), withTraceID(tmpl, i)); err != nil {
			b.Fatal(err)
		}
		if i%100 == 99 {
			release()
		}
	}
	release()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
	b.ReportMetric(float64(b.N*spans)/b.Elapsed().Seconds(), "spans/s")
}

type consumerNop struct{}

func (consumerNop) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: true}
}
func (consumerNop) ConsumeTraces(context.Context, ptrace.Traces) error { return nil }
