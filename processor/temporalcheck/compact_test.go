// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// A conversation idle for compact_after is kept in its saved form and
// rebuilt at its next turn or its end: every verdict, pass or violation,
// with its mark, is the one it has when every group stays in memory, over
// random conversations with pauses shorter and longer than compact_after,
// some past group_timeout.
func TestCompactedConversationsAreJudgedAsInMemory(t *testing.T) {
	tools := []string{"transfer_to_greeting", "say_hello", "transfer_to_weather", "get_weather", "say_goodbye"}
	pauses := []time.Duration{time.Second, 3 * time.Second, 20 * time.Second, time.Minute, 6 * time.Minute}
	play := func(seed uint64, compactAfter time.Duration) (verdicts []string, dormant int) {
		c := weatherConfig()
		c.Report = ReportAll
		c.CompactAfter = &compactAfter
		c.Predicates = append(c.Predicates, predicate.Named{Name: "sayHello", Predicate: predicate.Predicate{Tool: "say_hello"}})
		c.Assertions = append(c.Assertions,
			assertion.Config{Name: "te1", Always: "xferToGreeting >> sayHello + xferToWeather", OnEnd: "fail"},
			assertion.Config{Name: "handedOver", Pattern: map[string]any{"requires": map[string]any{"x": "xferToWeather"}}})
		clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
		p, sink := startProcessor(t, c, clock)
		rng := rand.New(rand.NewPCG(seed, 7))
		for turn := 1; turn <= 80; turn++ {
			conv := fmt.Sprintf("c%d", rng.IntN(6))
			if err := p.ConsumeTraces(context.Background(), weatherTurn(turn, conv, tools[rng.IntN(len(tools))])); err != nil {
				t.Fatal(err)
			}
			p.Tick(clock.add(pauses[rng.IntN(len(pauses))]))
			dormant = max(dormant, p.DormantGroups())
		}
		shutdown(t, p)
		return evaluations(sink), dormant
	}
	for seed := range uint64(6) {
		inMemory, none := play(seed, 0)
		compacted, dormant := play(seed, 2*time.Second)
		if none != 0 || dormant == 0 {
			t.Fatalf("seed %d: %d dormant groups without compact_after, %d with", seed, none, dormant)
		}
		if !slices.Equal(compacted, inMemory) {
			t.Errorf("seed %d: compacted\n%q\nin memory\n%q", seed, compacted, inMemory)
		}
	}
}

// selfHandoffConf is a configuration, grouped by conversation, with an
// assertion over capture predicates: no transfer to the agent a transfer
// just went to.
func selfHandoffConf() map[string]any {
	return map[string]any{
		"group_by": "conversation",
		"predicates": []any{
			map[string]any{"name": "xfer", "tool": "transfer_to_agent", "capture": map[string]any{"agent": "args.agentName"}},
			map[string]any{"name": "xferSame", "tool": "transfer_to_agent", "args": map[string]any{"agentName": map[string]any{"captured": "agent"}}},
		},
		"assertions": []any{map[string]any{"name": "no_self_handoff", "never": "xfer + xferSame"}},
	}
}

// Assertions over capture predicates cannot be saved: compact_after set is
// refused with the reason, and left unset it compacts nothing.
func TestCaptureAssertionsAreNotCompacted(t *testing.T) {
	conf := selfHandoffConf()
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	withCompact := maps.Clone(conf)
	withCompact["compact_after"] = "10s"
	if err := confmap.NewFromStringMap(withCompact).Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	_, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, new(consumertest.TracesSink))
	if err == nil || !strings.Contains(err.Error(), "compact_after") || !strings.Contains(err.Error(), "capture") {
		t.Fatalf("compact_after with capture predicates: %v", err)
	}
	cfg = NewFactory().CreateDefaultConfig().(*Config)
	if err := confmap.NewFromStringMap(conf).Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
	p, _ := startProcessor(t, cfg, clock)
	defer shutdown(t, p)
	if err := p.ConsumeTraces(context.Background(), weatherTurn(1, "c", "transfer_to_agent")); err != nil {
		t.Fatal(err)
	}
	p.Tick(clock.add(time.Minute))
	if p.OpenGroups() != 1 || p.DormantGroups() != 0 {
		t.Errorf("unset: %d open, %d dormant; want 1 and 0", p.OpenGroups(), p.DormantGroups())
	}
}

// evaluations lists every verdict a sink received as "assertion
// conversation-turn label mark", sorted.
func evaluations(sink *consumertest.TracesSink) []string {
	var out []string
	eachEvaluation(sink, func(span ptrace.Span, a map[string]any) {
		out = append(out, fmt.Sprintf("%s %s-%s %s %q", a[verdictattr.EvaluationName], a[verdictattr.Group], turnOf(span), a[verdictattr.ScoreLabel], a[verdictattr.History]))
	})
	slices.Sort(out)
	return out
}

// The open and dormant groups are self-metrics: at every moment of random
// conversations with pauses around compact_after and group_timeout, the
// gauges are the stage's counts, and both are zero once every group ended.
func TestOpenAndDormantGroupsAreGauged(t *testing.T) {
	set, reader := meteredSettings()
	compactAfter := 2 * time.Second
	cfg := weatherConfig()
	cfg.CompactAfter = &compactAfter
	pt, err := NewFactory().CreateTraces(context.Background(), set, cfg, new(consumertest.TracesSink))
	if err != nil {
		t.Fatal(err)
	}
	p := pt.(*temporalProcessor)
	clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
	p.UseClock(clock.now)
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	gauges := func() (open, dormant int64) {
		got := sums(t, reader)
		return got["otelcol_processor_temporalcheck_groups_open"], got["otelcol_processor_temporalcheck_groups_dormant"]
	}
	rng := rand.New(rand.NewPCG(3, 9))
	pauses := []time.Duration{time.Second, 3 * time.Second, time.Minute, 6 * time.Minute}
	sawDormant := false
	for turn := 1; turn <= 60; turn++ {
		if err := p.ConsumeTraces(context.Background(), weatherTurn(turn, fmt.Sprintf("c%d", rng.IntN(5)), "get_weather")); err != nil {
			t.Fatal(err)
		}
		p.Tick(clock.add(pauses[rng.IntN(len(pauses))]))
		open, dormant := gauges()
		if open != int64(p.OpenGroups()) || dormant != int64(p.DormantGroups()) {
			t.Fatalf("turn %d: gauges %d open, %d dormant; the stage has %d and %d", turn, open, dormant, p.OpenGroups(), p.DormantGroups())
		}
		sawDormant = sawDormant || dormant > 0
	}
	p.Tick(clock.add(time.Hour))
	if open, dormant := gauges(); open != 0 || dormant != 0 || !sawDormant {
		t.Errorf("after every group ended: %d open, %d dormant (a dormant one seen: %v)", open, dormant, sawDormant)
	}
	shutdown(t, p)
}

// BenchmarkTurnAfterAPause: what compact_after costs a conversation's next
// turn. One op is one turn (a tool call, the five tools in turn) of one of
// 50 conversations of 20 turns each, a minute after the last turn, under
// te3 (weatherConfig): with compact_after 10s, every turn finds its
// conversation dormant and rebuilds it by replaying its events (up to 19
// turns); with 0, it is still in memory.
func BenchmarkTurnAfterAPause(b *testing.B) {
	const conversations, turns = 50, 20
	tools := []string{"transfer_to_greeting", "say_hello", "transfer_to_weather", "get_weather", "say_goodbye"}
	for _, compactAfter := range []time.Duration{0, 10 * time.Second} {
		b.Run(fmt.Sprintf("compact_after=%v", compactAfter), func(b *testing.B) {
			cfg := weatherConfig()
			cfg.CompactAfter, cfg.GroupTimeout, cfg.Workers = &compactAfter, 24*time.Hour, 1
			p, err := NewFactory().CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			tp := p.(*temporalProcessor)
			clock := &fakeClock{t: time.Unix(1_800_000_000, 0)}
			tp.UseClock(clock.now)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				conv := fmt.Sprintf("c%d-%d", i%conversations, i/(conversations*turns))
				if err := tp.ConsumeTraces(context.Background(), weatherTurn(i, conv, tools[(i/conversations)%len(tools)])); err != nil {
					b.Fatal(err)
				}
				clock.t = clock.t.Add(time.Minute)
				tp.Tick(clock.t)
			}
			b.ReportMetric(float64(tp.DormantGroups()), "dormant")
			if err := tp.Shutdown(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}
