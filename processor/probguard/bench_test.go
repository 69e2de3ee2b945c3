package probguard

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/core/guard"
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
// its self-metrics; "scored+learned" adds online learning. The difference of
// ns/event is probguard's own cost. "reported" puts the fork on the burner
// in every fourth event: ten reports an op, each an annotation written.
func BenchmarkPerEvent(b *testing.B) {
	td, unsafe := benchTrace(false), benchTrace(true)
	const events = 40
	run := func(b *testing.B, edit func(*Config), body func(p *probProcessor)) {
		cfg, err := loadConfig(&testing.T{}, "stove")
		if err != nil {
			b.Fatal(err)
		}
		cfg.Threshold = 0.5
		if edit != nil {
			edit(cfg)
		}
		p, _ := newTestProcessor(b, cfg, nopSettings())
		defer shutdown(b, p)
		body(p) // the first chunk annotates; later ones only score
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			body(p)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
	}
	b.Run("events", func(b *testing.B) {
		run(b, nil, func(p *probProcessor) { p.src.Continue(td) })
	})
	b.Run("scored", func(b *testing.B) {
		run(b, nil, func(p *probProcessor) { p.score(context.Background(), td) })
	})
	b.Run("scored+learned", func(b *testing.B) {
		run(b, func(c *Config) { c.Learn = &LearnConfig{Output: b.TempDir() + "/online.json"} },
			func(p *probProcessor) { p.score(context.Background(), td) })
	})
	b.Run("reported", func(b *testing.B) {
		run(b, func(c *Config) { c.Report = guard.ReportEvery }, func(p *probProcessor) { p.score(context.Background(), unsafe) })
	})
}

// BenchmarkThroughput: the stove configuration over 40-event traces beside
// a processor that only passes batches on. One op is one trace; ns/span and
// spans/s are what to compare.
func BenchmarkThroughput(b *testing.B) {
	tmpl := benchTrace(false)
	b.Run("passthrough", func(b *testing.B) { fixtures.PassThrough(b, metadata.Type, tmpl) })
	b.Run("probguard", func(b *testing.B) {
		cfg, err := loadConfig(&testing.T{}, "stove")
		if err != nil {
			b.Fatal(err)
		}
		pt, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, fixtures.NopTraces{})
		if err != nil {
			b.Fatal(err)
		}
		p := pt.(*probProcessor)
		clock := time.Unix(1_800_000_000, 0)
		p.now = func() time.Time { return clock }
		fixtures.Throughput(b, tmpl, p.ConsumeTraces, func() {
			clock = clock.Add(2 * time.Minute) // released, and the groups ended
			p.forward(context.Background(), p.expire())
		})
	})
}
