// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// pick is a copy of a one-scope trace with only the spans at the indices
// given, in that order.
func pick(td ptrace.Traces, idx ...int) ptrace.Traces {
	out := ptrace.NewTraces()
	td.ResourceSpans().CopyTo(out.ResourceSpans())
	spans := out.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	spans.RemoveIf(func(ptrace.Span) bool { return true })
	from := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for _, i := range idx {
		from.At(i).CopyTo(spans.AppendEmpty())
	}
	return out
}

// stoveRun: the root, then look, look, turn_on_stove, stir with the fork on
// the burner, turn_off_stove with it still there (spans 1 to 5).
func stoveRun(conversation string) ptrace.Traces {
	return fixtures.StoveTrace(0, conversation,
		fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "look"}, fixtures.ToolCall{Tool: "turn_on_stove"},
		fixtures.ToolCall{Tool: "stir", Fork: true}, fixtures.ToolCall{Tool: "turn_off_stove", Fork: true})
}

var stoveRunAnnotations = []string{
	"execute_tool look risk 00 0.9599",
	"execute_tool stir risk 11 0.0000 violation",
	"execute_tool turn_off_stove unknown_state 10",
}

// Spans exported as a live agent's SDK does, each tool call as it ends and
// the root last, are scored as each batch arrives: when ConsumeTraces
// returns, its events are annotated and passed on, with no wait and no
// tick; the annotations are those of the whole trace scored at once.
func TestScoresAsSpansArrive(t *testing.T) {
	p, sink := newTestProcessor(t, stoveConfig(t), nopSettings())
	whole := stoveRun("")
	in := 0
	for i, batch := range [][]int{{1, 2}, {3, 4}, {5, 0}} {
		in += feed(t, p, pick(whole, batch...))
		if got, want := sink.SpanCount(), 2*(i+1); got != want {
			t.Fatalf("after batch %d: %d spans passed on, want %d", i+1, got, want)
		}
	}
	if got, want := annotations(sink), stoveRunAnnotations; !slices.Equal(got, want) {
		t.Errorf("annotations before shutdown\n got %q\nwant %q", got, want)
	}
	shutdown(t, p)
	if sink.SpanCount() != in {
		t.Errorf("%d spans in, %d out", in, sink.SpanCount())
	}
}

// By conversation, a trace's spans wait until a batch brings the group key
// (here on the root, as ADK puts gen_ai.conversation.id on invoke_agent
// only); then everything held is scored at once, in order.
func TestHeldUntilTheGroupIsKnown(t *testing.T) {
	cfg := stoveConfig(t)
	cfg.GroupBy = "conversation"
	p, sink := newTestProcessor(t, cfg, nopSettings())
	whole := stoveRun("conv-1")
	feed(t, p, pick(whole, 1, 2, 3))
	if sink.SpanCount() != 0 {
		t.Fatalf("%d spans passed on before their group was known", sink.SpanCount())
	}
	feed(t, p, pick(whole, 4, 5, 0))
	if got := annotations(sink); !slices.Equal(got, stoveRunAnnotations) {
		t.Errorf("annotations\n got %q\nwant %q", got, stoveRunAnnotations)
	}
	shutdown(t, p)
}

// An event exported after a later-starting one of its group was scored (a
// parallel tool call that ended later) is counted and scored as the
// continuation; when_complete orders the same batches by start.
func TestOutOfOrderEvents(t *testing.T) {
	for _, c := range []struct {
		score      Score
		outOfOrder float64
		want       []string
	}{
		// stir first: the fork on the burner, the knob off (never seen in
		// training); then turn_on_stove, out of order, the fork off again:
		// the violation in start order is missed, and counted.
		{ScoreOnArrival, 1, []string{"execute_tool stir unknown_state 10"}},
		{ScoreWhenComplete, 0, []string{"execute_tool stir risk 11 0.0000 violation"}},
	} {
		set, reader := meteredSettings()
		cfg := stoveConfig(t)
		cfg.Score = c.score
		p, sink := newTestProcessor(t, cfg, set)
		whole := fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "turn_on_stove"}, fixtures.ToolCall{Tool: "stir", Fork: true})
		in := feed(t, p, pick(whole, 2))
		in += feed(t, p, pick(whole, 1, 0))
		p.Tick(time.Now().Add(5 * time.Second))
		shutdown(t, p)
		if sink.SpanCount() != in {
			t.Errorf("%s: %d spans in, %d out", c.score, in, sink.SpanCount())
		}
		if got := annotations(sink); !slices.Equal(got, c.want) {
			t.Errorf("%s: annotations\n got %q\nwant %q", c.score, got, c.want)
		}
		got := metricsOf(t, reader)
		if got["otelcol_processor_probguard_out_of_order_events"] != c.outOfOrder {
			t.Errorf("%s: out of order events %v, want %v", c.score, got["otelcol_processor_probguard_out_of_order_events"], c.outOfOrder)
		}
		// The group's later verdicts say agentguard.history: out_of_order.
		if marked := got["otelcol_processor_probguard_groups_history_incomplete{reason=out_of_order}"]; marked != c.outOfOrder {
			t.Errorf("%s: %v groups marked out of order, want %v", c.score, marked, c.outOfOrder)
		}
	}
}

// The spans of one group in one batch are scored together, in start order,
// whether they continue a trace already taken or begin a new one.
func TestOneBatchOneOrder(t *testing.T) {
	set, reader := meteredSettings()
	cfg := stoveConfig(t)
	cfg.GroupBy, cfg.Workers = "conversation", 1
	p, sink := newTestProcessor(t, cfg, set)
	early := fixtures.StoveTrace(0, "conv-1", fixtures.ToolCall{Tool: "turn_on_stove"})
	late := fixtures.StoveTrace(1, "conv-1", fixtures.ToolCall{Tool: "stir", Fork: true}) // a minute later
	feed(t, p, pick(late, 0))                                                             // its root: the group is known, no event yet
	batch := pick(late, 1)                                                                // its tool call, a continuation ...
	pick(early, 1, 0).ResourceSpans().MoveAndAppendTo(batch.ResourceSpans())              // ... and a whole earlier trace
	feed(t, p, batch)
	shutdown(t, p)
	if got, want := annotations(sink), []string{"execute_tool stir risk 11 0.0000 violation"}; !slices.Equal(got, want) {
		t.Errorf("annotations %q, want %q", got, want)
	}
	if got := metricsOf(t, reader)["otelcol_processor_probguard_out_of_order_events"]; got != 0 {
		t.Errorf("%v events out of order", got)
	}
}
