// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/internal/fixtures/recording"
)

// groupTrace is one turn of conversation n: a single say_hello call.
func groupTrace(n int) ptrace.Traces {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1, byte(n), byte(n >> 8), byte(n >> 16), 9, 9, 9, 9, byte(n), byte(n >> 8), byte(n >> 16)})
	sp.SetSpanID(pcommon.SpanID{1, byte(n), byte(n >> 8), byte(n >> 16)})
	sp.SetName("execute_tool say_hello")
	sp.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + n))
	sp.SetEndTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + n + 1000))
	sp.Attributes().PutStr("gen_ai.operation.name", "execute_tool")
	sp.Attributes().PutStr("gen_ai.tool.name", "say_hello")
	sp.Attributes().PutStr("gen_ai.conversation.id", fmt.Sprintf("conversation-%06d", n))
	return td
}

// An open group costs at most 768 bytes of heap beyond its spans, which
// have left: 100 000 conversations, each one turn in, stay open (the paper's
// three assertions, each with a live evaluation or none). That is all a
// group holds: its monitors, events and histories, the group and its table
// entry, its trace's remembered ID. Idle for compact_after, it is kept in
// its saved form, and costs at most 384 bytes. The resident set is this
// times the garbage collector's headroom (make cost's row 4).
func TestOpenGroupCost(t *testing.T) {
	for _, c := range []struct {
		name         string
		compactAfter time.Duration
		bound        float64
	}{{"in memory", 0, 768}, {"dormant", 10 * time.Second, 384}} {
		t.Run(c.name, func(t *testing.T) {
			perGroup := openGroupCost(t, 100_000, c.compactAfter)
			t.Logf("%.0f bytes of heap per open group, %s", perGroup, c.name)
			if perGroup > c.bound {
				t.Errorf("an open group costs %.0f bytes %s, more than %.0f", perGroup, c.name, c.bound)
			}
		})
	}
}

// openGroupCost is the heap each of groups one-turn conversations costs
// once their spans have left, a minute after their turn.
func openGroupCost(t *testing.T, groups int, compactAfter time.Duration) float64 {
	p, sink, clock := newClockedProcessor(t, "paper", func(c *Config) {
		c.GroupBy = "gen_ai.conversation.id"
		c.MaxTraces = 2 * groups
		c.CompactAfter = &compactAfter
	})
	p.Sync() // the workers' own start-up allocations are not the groups'
	before := liveHeap()
	for n := 0; n < groups; n += 1000 {
		batch := ptrace.NewTraces()
		for i := n; i < n+1000; i++ {
			groupTrace(i).ResourceSpans().MoveAndAppendTo(batch.ResourceSpans())
		}
		feed(t, p, batch)
	}
	clock.t = clock.t.Add(time.Minute)
	p.Tick(clock.t)
	sink.Reset() // the spans have left
	after := liveHeap()
	if open := p.OpenGroups(); open != groups {
		t.Fatalf("%d groups open, want %d", open, groups)
	}
	if dormant, want := p.DormantGroups(), map[bool]int{true: groups}[compactAfter > 0]; dormant != want {
		t.Fatalf("%d groups dormant, want %d", dormant, want)
	}
	shutdown(t, p)
	return float64(after-before) / float64(groups)
}

// A conversation of ADK's failing weather run (two turns, two violations
// of te1, their explanations reported) costs at most 1 536 bytes of heap
// while it stays in memory, its spans gone: its events, its history and its
// live evaluations. Its monitors keep neither the explanation trees of the
// verdicts they reported (2 688 bytes when they did) nor, when nothing runs,
// their running part and its free evaluations (2 167 bytes when they did).
// The garbage collector marks this at every collection for every
// conversation kept in memory.
func TestOpenADKConversationCost(t *testing.T) {
	const groups, bound, violations = 5000, 1536, 2
	turns := []ptrace.Traces{fixtures.Traces(t, "adk-weather/adk-bad-43-0.json"), fixtures.Traces(t, "adk-weather/adk-bad-43-1.json")}
	noCompaction := time.Duration(0)
	p, sink, clock := newClockedProcessor(t, "paper", func(c *Config) {
		c.GroupBy = "conversation"
		c.MaxTraces = 4 * groups
		c.CompactAfter = &noCompaction
	})
	p.Sync()
	before := liveHeap()
	reported := 0
	for i := range groups {
		for _, turn := range turns {
			td := ptrace.NewTraces()
			turn.CopyTo(td)
			recording.Renumber(td, i, fmt.Sprintf("conversation-%d", i), sequence.ConversationKeys()...)
			feed(t, p, td)
		}
		if i%1000 == 999 {
			clock.t = clock.t.Add(time.Second)
			p.Tick(clock.t)
			reported += len(verdictsOf(sink))
			sink.Reset()
		}
	}
	clock.t = clock.t.Add(time.Minute)
	p.Tick(clock.t)
	reported += len(verdictsOf(sink))
	sink.Reset() // the spans have left
	perGroup := float64(liveHeap()-before) / groups
	if reported != violations*groups {
		t.Fatalf("%d violations reported, want %d a conversation", reported, violations)
	}
	if open := p.OpenGroups(); open != groups {
		t.Fatalf("%d groups open, want %d", open, groups)
	}
	shutdown(t, p)
	t.Logf("%.0f bytes of heap per open conversation", perGroup)
	if perGroup > bound {
		t.Errorf("an open conversation costs %.0f bytes, more than %d", perGroup, bound)
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
