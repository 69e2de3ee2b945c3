// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/checkpoint/checkpointtest"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// feed consumes one stove turn of a conversation and releases it.
func feed(t *testing.T, s *Stage[*recGroup], clock *time.Time, turn int, conv string) {
	t.Helper()
	if err := s.ConsumeTraces(context.Background(), fixtures.StoveTrace(turn, conv, fixtures.ToolCall{Tool: "stir"})); err != nil {
		t.Fatal(err)
	}
	*clock = clock.Add(2 * time.Second)
	s.Tick(*clock)
}

// A group first seen within warm_up after Start is partial; one first seen
// after it is complete, and so is any group of a stage never started (the
// offline check).
func TestWarmUpMarksGroupsFirstSeenAfterStart(t *testing.T) {
	r := newRecorder()
	cfg := baseConfig()
	cfg.WarmUp = 30 * time.Second
	s := newTestStage(t, cfg, r, new(consumertest.TracesSink))
	clock := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return clock })
	if err := s.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	feed(t, s, &clock, 0, "early")
	clock = clock.Add(45 * time.Second) // past the warm-up, within group_timeout
	feed(t, s, &clock, 1, "late")
	feed(t, s, &clock, 2, "early") // still the group first seen in the window
	if got := r.marks["early"]; got != HistoryPartial {
		t.Errorf("group first seen in the warm-up: %v, want partial", got)
	}
	if got := r.marks["late"]; !got.Complete() {
		t.Errorf("group first seen after the warm-up: %v, want complete", got)
	}

	offline := newRecorder()
	s2 := newTestStage(t, cfg, offline, new(consumertest.TracesSink))
	s2.UseClock(func() time.Time { return clock })
	feed(t, s2, &clock, 0, "early")
	if got := offline.marks["early"]; !got.Complete() {
		t.Errorf("a stage never started: %v, want complete", got)
	}
	s2.Shutdown(context.Background())
}

// A group max_traces ended early that comes back is partial: its state was
// lost to the bound.
func TestGroupBackAfterBoundIsPartial(t *testing.T) {
	r := newRecorder()
	cfg := baseConfig()
	cfg.MaxTraces, cfg.Workers = 1, 1
	s := newTestStage(t, cfg, r, new(consumertest.TracesSink))
	clock := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return clock })
	feed(t, s, &clock, 0, "a")
	feed(t, s, &clock, 1, "b") // ends a
	if got := r.marks["a"]; !got.Complete() {
		t.Fatalf("a before the bound: %v", got)
	}
	feed(t, s, &clock, 2, "a") // comes back, ends b
	if got := r.marks["a"]; got != HistoryPartial {
		t.Errorf("a back after the bound ended it: %v, want partial", got)
	}
	if r.ended["a"] != 1 || r.ended["b"] != 1 {
		t.Errorf("ended %v", r.ended)
	}
	s.Shutdown(context.Background())
}

// A trace judged after a later trace of its group marks the group out of
// order, from then on; turns in order do not.
func TestTraceAfterALaterOneIsOutOfOrder(t *testing.T) {
	r := newRecorder()
	s := newTestStage(t, baseConfig(), r, new(consumertest.TracesSink))
	clock := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return clock })
	feed(t, s, &clock, 0, "c")
	feed(t, s, &clock, 1, "c")
	if got := r.marks["c"]; !got.Complete() {
		t.Fatalf("turns in order: %v", got)
	}
	feed(t, s, &clock, 3, "c")
	feed(t, s, &clock, 2, "c") // turn 2 redelivered after turn 3
	if got := r.marks["c"]; got != HistoryOutOfOrder {
		t.Errorf("turn 2 after turn 3: %v, want out_of_order", got)
	}
	feed(t, s, &clock, 4, "c")
	if got := r.marks["c"]; got != HistoryOutOfOrder {
		t.Errorf("the turn after: %v, want the mark kept", got)
	}
	s.Shutdown(context.Background())
}

func TestHistoryString(t *testing.T) {
	for h, want := range map[History]string{0: "", HistoryPartial: "partial", HistoryOutOfOrder: "out_of_order",
		HistoryPartial | HistoryOutOfOrder: "partial"} {
		if h.String() != want {
			t.Errorf("%d: %q, want %q", h, h.String(), want)
		}
	}
}

// With per-trace groups, only a trace that started before the start is
// partial in the warm-up: one that started after it cannot have left spans
// in the process before.
func TestWarmUpMarksTracesStartedBeforeTheStart(t *testing.T) {
	r := newRecorder()
	cfg := baseConfig()
	cfg.GroupBy, cfg.WarmUp, cfg.Late = "trace_id", time.Hour, LateContinue
	s := newTestStage(t, cfg, r, new(consumertest.TracesSink))
	clock := fixtures.StoveEpoch.Add(90 * time.Second) // run 0 started before, run 2 after
	s.UseClock(func() time.Time { return clock })
	if err := s.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	feed(t, s, &clock, 0, "")
	feed(t, s, &clock, 2, "")
	before, after := fixtures.StoveTrace(0, "").ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String(),
		fixtures.StoveTrace(2, "").ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()
	if got := r.marks[before]; got != HistoryPartial {
		t.Errorf("trace started before the start: %v, want partial", got)
	}
	if got, ok := r.marks[after]; !ok || !got.Complete() {
		t.Errorf("trace started after the start: %v (judged %v), want complete", got, ok)
	}
}

// With late spans judged as their group's continuation, a late event that
// started before one the group already judged is out of order; one that
// started after is not.
func TestLateEventBeforeAJudgedOneIsOutOfOrder(t *testing.T) {
	r := newRecorder()
	cfg := baseConfig()
	cfg.Late = LateContinue
	s := newTestStage(t, cfg, r, new(consumertest.TracesSink))
	clock := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return clock })
	defer s.Shutdown(context.Background())
	consume := func(calls ...fixtures.ToolCall) {
		if err := s.ConsumeTraces(context.Background(), fixtures.StoveTrace(0, "c", calls...)); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(2 * time.Second)
		s.Tick(clock)
	}
	consume(fixtures.ToolCall{Tool: "stir", At: 5 * time.Second})
	consume(fixtures.ToolCall{Tool: "stir", At: 9 * time.Second}) // late, after
	if got := r.marks["c"]; !got.Complete() {
		t.Fatalf("late event after the judged one: %v, want complete", got)
	}
	consume(fixtures.ToolCall{Tool: "stir", At: 2 * time.Second}) // late, before
	if got := r.marks["c"]; got != HistoryOutOfOrder {
		t.Errorf("late event before a judged one: %v, want out_of_order", got)
	}
}

// endRecorder records the history each group's end was reported on.
type endRecorder struct {
	*recorder
	mu   sync.Mutex
	ends map[string][]History
}

func newEndRecorder() *endRecorder {
	return &endRecorder{recorder: newRecorder(), ends: map[string][]History{}}
}

func (e *endRecorder) End(ctx context.Context, key string, g *recGroup, h History, at *Target) {
	e.mu.Lock()
	e.ends[key] = append(e.ends[key], h)
	e.mu.Unlock()
	e.recorder.End(ctx, key, g, h, at)
}

// A trace that is a group of its own ends when it is released (its end
// verdicts at once); spans of it that come later take it up where it
// ended, instead of passing on unjudged, and the verdicts of its next end
// are marked out_of_order.
func TestLateSpansTakeUpATraceEndedAtItsRelease(t *testing.T) {
	cfg := baseConfig()
	cfg.GroupBy, cfg.Retention = sequence.ByTraceID, time.Hour
	r := newEndRecorder()
	sink := new(consumertest.TracesSink)
	s := newTestStage(t, cfg, r, sink)
	defer s.Shutdown(context.Background())
	clock := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return clock })
	for range 2 { // the same trace, then again: every span of the second late
		if err := s.ConsumeTraces(context.Background(), fixtures.StoveTrace(0, "c", fixtures.ToolCall{Tool: "stir"})); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(2 * time.Second)
		s.Tick(clock)
	}
	if len(r.tools) != 1 {
		t.Fatalf("groups %v, want the trace's one", r.tools)
	}
	for key, tools := range r.tools {
		if len(tools) != 2 || r.marks[key] != 0 {
			t.Errorf("judged %v on %v; want both calls, the late one unmarked", tools, r.marks[key])
		}
		if ends := r.ends[key]; len(ends) != 2 || ends[0] != 0 || ends[1] != HistoryOutOfOrder {
			t.Errorf("ends %v; want one at the release, complete, and one after the late spans, out_of_order", ends)
		}
	}
	if sink.SpanCount() != 2*fixtures.StoveTrace(0, "c", fixtures.ToolCall{Tool: "stir"}).SpanCount() {
		t.Errorf("%d spans passed on", sink.SpanCount())
	}
}

// Judged on arrival, a trace that is a group of its own and pauses longer
// than group_timeout (an agent waiting for a person's approval) ends idle;
// its next spans take it up where it ended, as late spans of a trace ended
// at its release do, and its next end is marked out_of_order: they do not
// start a group afresh with a complete history.
func TestATraceThatPausesPastGroupTimeoutIsTakenUp(t *testing.T) {
	r := playPaused(t, 1, 1) // past group_timeout: it ends idle
	if len(r.ends) != 1 {
		t.Fatalf("groups %v, want the trace's one", r.ends)
	}
	for key, ends := range r.ends {
		if len(ends) != 2 || ends[0] != 0 || ends[1] != HistoryOutOfOrder {
			t.Errorf("ends %v; want one at the pause, complete, and one after the spans that came after it, out_of_order", ends)
		}
		if tools := r.tools[key]; len(tools) != 2 {
			t.Errorf("judged %v, want both calls", tools)
		}
	}
}

// Paused longer still, past group_timeout after it ended idle, the trace is
// no longer kept: its next spans start a group of their own marked partial,
// not a fresh unmarked one.
func TestATraceThatPausesPastItsKeepingIsMarked(t *testing.T) {
	r := playPaused(t, 2, 1) // past group_timeout (it ends idle), then past it again (no longer kept)
	for key, ends := range r.ends {
		if len(ends) != 2 || ends[0] != 0 || ends[1]&HistoryPartial == 0 {
			t.Errorf("%s ends %v; want one complete, then one partial for the spans after it was let go", key, ends)
		}
	}
	if len(r.ends) != 1 {
		t.Errorf("groups %v, want the trace's one", r.ends)
	}
}

// In the warm-up, judged on arrival, a trace of its own whose first batch
// began after the start, and whose root (started before it) comes later, is
// partial from the root on: spans of it may have been judged, or lost,
// before the start.
func TestWarmUpMarksATraceWhoseRootComesLate(t *testing.T) {
	r := newRecorder()
	cfg := baseConfig()
	cfg.GroupBy, cfg.OnArrival, cfg.Late, cfg.Workers, cfg.WarmUp = sequence.ByTraceID, true, LateContinue, 1, time.Minute
	s := newTestStage(t, cfg, r, new(consumertest.TracesSink))
	td := fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "stir"}, fixtures.ToolCall{Tool: "stir"})
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	if spans.Len() != 3 || !spans.At(0).ParentSpanID().IsEmpty() || spans.At(1).StartTimestamp() <= spans.At(0).StartTimestamp() {
		t.Fatal("the fixture is not a root before two calls")
	}
	// The start: after the root began, before its first call.
	clock := time.Unix(0, int64(spans.At(0).StartTimestamp()+spans.At(1).StartTimestamp())/2)
	s.UseClock(func() time.Time { return clock })
	if err := s.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	key := spans.At(0).TraceID().String()
	for i, at := range []int{1, 0, 2} { // the first call, the root, the second call
		if err := s.ConsumeTraces(context.Background(), onlySpan(td, at)); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Second)
		s.Tick(clock)
		if want := []History{0, HistoryPartial, HistoryPartial}[i]; r.marks[key] != want {
			t.Errorf("after batch %d: judged %v, want %v", i+1, r.marks[key], want)
		}
	}
}

// spanOf is the i-th span of a one-scope trace such as StoveTrace's.
func spanOf(td ptrace.Traces, i int) ptrace.Span {
	return td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(i)
}

// playPaused plays pausedTrace to a stage judging traces of their own on
// arrival, one worker, ticking two minutes (past group_timeout) pauses[i]
// times after its part i, and returns what the evaluator saw.
func playPaused(t *testing.T, pauses ...int) *endRecorder {
	t.Helper()
	cfg := baseConfig()
	cfg.GroupBy, cfg.OnArrival, cfg.Late, cfg.Workers = sequence.ByTraceID, true, LateContinue, 1
	r := newEndRecorder()
	s := newTestStage(t, cfg, r, new(consumertest.TracesSink))
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) }) // after the test's reading of r, as a deferred one was
	clock := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return clock })
	first, last := pausedTrace()
	for i, td := range []ptrace.Traces{first, last} {
		if err := s.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
		for range pauses[i] {
			clock = clock.Add(2 * time.Minute)
			s.Tick(clock)
		}
	}
	return r
}

// pausedTrace is a trace of its own with two calls, as it comes when its
// agent pauses between them: the root and the first call, then the second.
func pausedTrace() (first, last ptrace.Traces) {
	td := fixtures.StoveTrace(0, "c", fixtures.ToolCall{Tool: "stir"}, fixtures.ToolCall{Tool: "stir"})
	first = ptrace.NewTraces()
	td.CopyTo(first)
	first.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.SpanID() == spanOf(td, 2).SpanID() })
	return first, onlySpan(td, 2)
}

// onlySpan is a copy of a one-scope trace holding its i-th span alone.
func onlySpan(td ptrace.Traces, i int) ptrace.Traces {
	out := ptrace.NewTraces()
	td.CopyTo(out)
	kept := spanOf(td, i).SpanID()
	out.ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(sp ptrace.Span) bool { return sp.SpanID() != kept })
	return out
}

// A trace that is a group of its own, judged on arrival and taken up by
// spans after it ended idle, is the same after a restart: its next end is
// marked out_of_order, and it is kept for its later spans as a trace is,
// not for the retention of a conversation.
func TestARestoredTraceOfItsOwnStaysItsOwn(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	start := func(r *endRecorder) *Stage[*recGroup] {
		cfg := storageConfig()
		cfg.GroupBy, cfg.OnArrival, cfg.Late, cfg.Workers = sequence.ByTraceID, true, LateContinue, 1
		return startOn(t, store, cfg, r, new(consumertest.TracesSink), &clock)
	}
	td := fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "stir"}, fixtures.ToolCall{Tool: "stir"}, fixtures.ToolCall{Tool: "stir"})
	key := spanOf(td, 0).TraceID().String()
	before := newEndRecorder()
	s := start(before)
	for _, at := range []int{1, 2} { // the first call, then, past group_timeout, the second
		if err := s.ConsumeTraces(context.Background(), onlySpan(td, at)); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(30 * time.Second)
		s.Tick(clock)
		if at == 1 {
			clock = clock.Add(2 * time.Minute) // it ends idle
			s.Tick(clock)
		}
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ends := before.ends[key]; len(ends) != 1 || ends[0] != 0 {
		t.Fatalf("ends before the restart %v, want one, complete", ends)
	}
	after := newEndRecorder()
	s = start(after)
	defer s.Shutdown(context.Background())
	clock = clock.Add(2 * time.Minute)
	s.Tick(clock) // the trace taken up ends idle again
	if ends := after.ends[key]; len(ends) != 1 || ends[0] != HistoryOutOfOrder {
		t.Fatalf("ends after the restart %v, want one, out_of_order", ends)
	}
	// Its last span, within group_timeout (no conversation is kept: no
	// retention) takes the trace up once more, with its history whole.
	clock = clock.Add(30 * time.Second)
	if err := s.ConsumeTraces(context.Background(), onlySpan(td, 3)); err != nil {
		t.Fatal(err)
	}
	if tools, marks := after.tools[key], after.marks[key]; len(tools) != 1 || marks != 0 {
		t.Errorf("after the restart, judged %v with marks %v; want the last call, continuing the trace, unmarked", tools, marks)
	}
}
