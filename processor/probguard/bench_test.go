// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/processor/probguard/internal/metadata"
)

// benchTrace is a stove run of 40 tool calls. With riskAt, every fourth
// call puts the fork on the burner with the knob on: the unsafe state.
func benchTrace(unsafe bool) ptrace.Traces {
	var steps []fixtures.ToolCall
	for range 10 {
		steps = append(steps, fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"}, fixtures.ToolCall{Tool: "stir", Fork: unsafe}, fixtures.ToolCall{Tool: "turn_off_stove"})
	}
	return fixtures.StoveTrace(0, "", steps...)
}

// BenchmarkPerEvent separates what probguard adds from the predicates: one
// op scores the 40 events of one chunk of a long-running group, θ = 0.5, so
// that none is reported after the first chunk. "events" is the OTTL
// predicates and the sequencing alone; "scored" adds the guard's decision and
// its self-metrics; "scored+published" adds publishing each decision to a
// risk endpoint; "scored+learned" adds online learning. The difference of
// ns/event is probguard's own cost. "reported" puts the fork on the burner
// in every fourth event: ten reports an op, each an annotation written.
func BenchmarkPerEvent(b *testing.B) {
	td, unsafe := benchTrace(false), benchTrace(true)
	const eventsPerTrace = 40
	run := func(b *testing.B, edit func(*Config), publish bool, body func(p *probProcessor, src *events.Source, st *group)) {
		cfg, err := loadConfig(b, "stove")
		if err != nil {
			b.Fatal(err)
		}
		cfg.Threshold = 0.5
		if edit != nil {
			edit(cfg)
		}
		p, _ := newTestProcessor(b, cfg, nopSettings())
		defer shutdown(b, p)
		src, err := events.NewSource(cfg.Config, cfg.GroupBy, nopSettings().TelemetrySettings)
		if err != nil {
			b.Fatal(err)
		}
		if publish {
			ext, err := riskendpoint.NewFactory().Create(context.Background(), extensiontest.NewNopSettings(component.MustNewType("riskendpoint")), riskendpoint.NewFactory().CreateDefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			p.board = ext.(riskendpoint.Board)
		}
		st := p.Open("bench")
		body(p, src, st) // the first chunk annotates; later ones only score
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			body(p, src, st)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*eventsPerTrace), "ns/event")
	}
	extract := func(src *events.Source, td ptrace.Traces) []sequence.Event {
		latch := src.NewLatch()
		evs, _ := src.Extract(td, &latch)
		return evs
	}
	score := func(td ptrace.Traces) func(p *probProcessor, src *events.Source, st *group) {
		return func(p *probProcessor, src *events.Source, st *group) {
			p.Events(context.Background(), "bench", st, 0, extract(src, td))
		}
	}
	b.Run("events", func(b *testing.B) {
		run(b, nil, false, func(_ *probProcessor, src *events.Source, _ *group) { extract(src, td) })
	})
	b.Run("scored", func(b *testing.B) { run(b, nil, false, score(td)) })
	b.Run("scored+published", func(b *testing.B) { run(b, nil, true, score(td)) })
	b.Run("scored+learned", func(b *testing.B) {
		run(b, func(c *Config) { c.Learn = &LearnConfig{Output: b.TempDir() + "/online.json"} }, false, score(td))
	})
	b.Run("reported", func(b *testing.B) {
		run(b, func(c *Config) { c.Report = guard.ReportEvery }, false, score(unsafe))
	})
}

// BenchmarkThroughput: the stove configuration over 40-event traces beside
// a processor that only passes batches on, scored on arrival (probguard)
// and when complete. One op is one trace; ns/span and spans/s are what to
// compare.
func BenchmarkThroughput(b *testing.B) {
	tmpl := benchTrace(false)
	b.Run("passthrough", func(b *testing.B) { fixtures.PassThrough(b, metadata.Type, tmpl) })
	for name, score := range benchScores {
		b.Run(name, func(b *testing.B) {
			cfg, err := loadConfig(b, "stove")
			if err != nil {
				b.Fatal(err)
			}
			cfg.Score = score
			pt, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, fixtures.NopTraces{})
			if err != nil {
				b.Fatal(err)
			}
			p := pt.(*probProcessor)
			clock := time.Unix(1_800_000_000, 0)
			p.UseClock(func() time.Time { return clock })
			fixtures.Throughput(b, tmpl, p.ConsumeTraces, func() {
				clock = clock.Add(2 * time.Minute) // released, and the groups ended
				p.Tick(clock)
			})
			shutdown(b, p)
		})
	}
}

// benchScores are the sub-benchmarks' names and scoring.
var benchScores = map[string]Score{"probguard": ScoreOnArrival, "probguard-when_complete": ScoreWhenComplete}

// BenchmarkThroughputParallel: as BenchmarkThroughput, with concurrent senders
// (fixtures.ThroughputParallel) and the processor on its own clock (wait 5ms), as in a collector:
// run with -cpu 1,2 to see it scale, beside the pass-through.
func BenchmarkThroughputParallel(b *testing.B) {
	tmpl := benchTrace(false)
	b.Run("passthrough", func(b *testing.B) { fixtures.PassThroughParallel(b, metadata.Type, tmpl) })
	for name, score := range benchScores {
		b.Run(name, func(b *testing.B) {
			cfg, err := loadConfig(b, "stove")
			if err != nil {
				b.Fatal(err)
			}
			cfg.Score = score
			cfg.Wait, cfg.RootWait, cfg.GroupTimeout = 5*time.Millisecond, 0, 10*time.Millisecond
			p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, fixtures.NopTraces{})
			if err != nil {
				b.Fatal(err)
			}
			if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				b.Fatal(err)
			}
			fixtures.ThroughputParallel(b, tmpl, p.ConsumeTraces, func() {
				if err := p.Shutdown(context.Background()); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
