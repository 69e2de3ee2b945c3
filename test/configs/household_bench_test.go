// SPDX-License-Identifier: Apache-2.0

package configs_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/test/sim/household"
)

// exporterSink does what an OTLP exporter does with each batch, encode it,
// and counts the spans, so that a pipeline's CPU per span can be set beside
// the pass-through's.
type exporterSink struct{ spans int }

func (*exporterSink) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (e *exporterSink) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	e.spans += td.SpanCount()
	_, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	return err
}

// episodeRequests are the real episodes as the SDK sends them: OTLP protobuf.
func episodeRequests(b *testing.B) [][]byte {
	var out [][]byte
	for _, name := range []string{"ep-001", "ep-004", "ep-010"} {
		raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(fixtures.Traces(b, "household-langgraph/"+name+".json"))
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, raw)
	}
	return out
}

// BenchmarkPipeline: the household configuration's whole pipeline per span
// (decode the SDK's request, the probguard processor, encode for the
// exporter) beside the same pipeline with a pass-through processor, in the
// same run. One op is one episode; ns/span is what to compare.
func BenchmarkPipeline(b *testing.B) {
	requests := episodeRequests(b)
	run := func(b *testing.B, consume func(context.Context, ptrace.Traces) error, release func(int), sink *exporterSink) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(requests[i%len(requests)])
			if err != nil {
				b.Fatal(err)
			}
			household.AsNewEpisode(td, i)
			if err := consume(context.Background(), td); err != nil {
				b.Fatal(err)
			}
			release(i)
		}
		release(-1)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(sink.spans), "ns/span")
	}
	b.Run("passthrough", func(b *testing.B) {
		sink := &exporterSink{}
		p, err := processorhelper.NewTraces(context.Background(), processortest.NewNopSettings(processortest.NopType), struct{}{}, sink,
			func(_ context.Context, td ptrace.Traces) (ptrace.Traces, error) { return td, nil })
		if err != nil {
			b.Fatal(err)
		}
		run(b, p.ConsumeTraces, func(int) {}, sink)
	})
	b.Run("probguard", func(b *testing.B) {
		sink := &exporterSink{}
		p := newHouseholdProcessor(b, sink)
		clocked := p.(interface {
			UseClock(func() time.Time)
			Tick(time.Time)
		})
		clock := time.Unix(1_800_000_000, 0)
		clocked.UseClock(func() time.Time { return clock })
		run(b, p.ConsumeTraces, func(i int) {
			if i%20 == 19 || i < 0 {
				clock = clock.Add(10 * time.Minute) // released, and the episodes' groups ended
				clocked.Tick(clock)
			}
		}, sink)
		if err := p.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
}
