// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/internal/selfmetric"
)

// recorder is an Evaluator that records, per group, the tools of its
// events in the order judged, and how its groups ended; slow makes each
// Events call take that long.
type recorder struct {
	mu    sync.Mutex
	tools map[string][]string
	ended map[string]int
	// resumed: groups that ended and went on (Resumer): the ends they
	// take back
	resumed map[string]int
	marks   map[string]History // the history each group was last judged on
	slow    time.Duration
	block   chan struct{} // if set, Events waits for it to close
	onEnd   func(at *Target)
	judged  atomic.Int64
}

type recGroup struct{ key string }

func newRecorder() *recorder {
	return &recorder{tools: map[string][]string{}, ended: map[string]int{}, resumed: map[string]int{}, marks: map[string]History{}}
}

func (r *recorder) Resumed(key string, _ *recGroup) {
	r.mu.Lock()
	r.resumed[key]++
	r.mu.Unlock()
}

func (r *recorder) Open(key string) *recGroup { return &recGroup{key: key} }

func (r *recorder) Events(_ context.Context, key string, _ *recGroup, h History, evs []sequence.Event) {
	time.Sleep(r.slow)
	if r.block != nil {
		<-r.block
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marks[key] = h
	for _, ev := range evs {
		v, _ := ev.Span.Attributes().Get("gen_ai.tool.name")
		r.tools[key] = append(r.tools[key], v.Str())
	}
	r.judged.Add(1)
}

func (r *recorder) End(_ context.Context, key string, _ *recGroup, _ History, at *Target) {
	r.mu.Lock()
	r.ended[key]++
	r.mu.Unlock()
	if r.onEnd != nil {
		r.onEnd(at)
	}
}

// nopMetrics is every metric of the table, recording nothing.
func nopMetrics() Metrics {
	var m Metrics
	if err := selfmetric.Build(noop.NewMeterProvider().Meter("t"), m.Instruments("t_")); err != nil {
		panic(err)
	}
	return m
}

func newTestStage(t testing.TB, cfg Config, r Evaluator[*recGroup], next consumer.Traces) *Stage[*recGroup] {
	t.Helper()
	set := componenttest.NewNopTelemetrySettings()
	pcfg := predicate.Config{Predicates: predicate.List{{Name: "stir", Predicate: predicate.Predicate{Tool: "stir"}}}}
	s, err := New(cfg, set, next, nopMetrics(), func() (*events.Source, error) { return events.NewSource(pcfg, cfg.GroupBy, set) }, r)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func baseConfig() Config {
	return Config{Bounds: Bounds{Wait: time.Second, GroupTimeout: time.Minute, MaxTraces: 1000, MaxSpansPerTrace: 100, Workers: 4},
		GroupBy: "conversation", Scope: "github.com/agentguard/agentguard/processor/test"}
}

// The turns of a conversation, held in different shards, are judged in
// order on one worker, however many workers there are.
func TestConversationJudgedInOrderAcrossShards(t *testing.T) {
	r := newRecorder()
	sink := new(consumertest.TracesSink)
	s := newTestStage(t, baseConfig(), r, sink)
	clock := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return clock })
	in := 0
	for turn := range 40 {
		td := fixtures.StoveTrace(turn, fmt.Sprintf("conv-%d", turn%3), fixtures.ToolCall{Tool: fmt.Sprintf("t%02d", turn)})
		in += td.SpanCount()
		if err := s.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	clock = clock.Add(time.Hour)
	s.Tick(clock)
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for c := range 3 {
		got := r.tools[fmt.Sprintf("conv-%d", c)]
		if !slices.IsSorted(got) || len(got) < 13 {
			t.Errorf("conv-%d judged as %v", c, got)
		}
	}
	if sink.SpanCount() != in {
		t.Errorf("%d spans in, %d out", in, sink.SpanCount())
	}
}

// When the evaluators fall behind, ConsumeTraces waits instead of letting
// memory grow: what was accepted and not yet passed on stays within the
// buffer's bound and the queue, and a caller that gives up hands over
// nothing.
func TestBackpressureBoundsWhatIsInFlight(t *testing.T) {
	r := newRecorder()
	r.slow = 2 * time.Millisecond
	var out atomic.Int64
	sink := new(consumertest.TracesSink)
	cfg := baseConfig()
	cfg.MaxTraces, cfg.Workers, cfg.Wait = 8, 1, time.Hour // only evictions release traces
	cfg.QueueSpans = 12
	s := newTestStage(t, cfg, r, sink)
	counting := &countingSink{TracesSink: sink, n: &out}
	s.next = counting
	const traces = 400
	spansPer := fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "stir"}).SpanCount()
	maxInFlight := int64(0)
	for n := range traces {
		if err := s.ConsumeTraces(context.Background(), fixtures.StoveTrace(n, "", fixtures.ToolCall{Tool: "stir"})); err != nil {
			t.Fatal(err)
		}
		maxInFlight = max(maxInFlight, int64((n+1)*spansPer)-out.Load())
	}
	// Held traces, plus a full queue, plus the one-trace batch that may
	// wait for room, in spans.
	bound := int64((cfg.MaxTraces+1)*spansPer + cfg.QueueSpans)
	if maxInFlight > bound {
		t.Errorf("%d spans in flight at most, bound %d: the queue grew", maxInFlight, bound)
	}
	t.Logf("at most %d spans accepted and not yet passed on (bound %d)", maxInFlight, bound)

	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := int64(traces * spansPer); out.Load() != want {
		t.Errorf("%d spans out, want %d", out.Load(), want)
	}
}

// With the queue full (the evaluator stuck), a sender whose context ends
// is refused and has handed over nothing; once the evaluator moves, every
// span accepted comes out.
func TestFullQueueRefusesWithNothingTaken(t *testing.T) {
	r := newRecorder()
	gate := make(chan struct{})
	r.block = gate
	var out atomic.Int64
	sink := new(consumertest.TracesSink)
	cfg := baseConfig()
	cfg.Workers, cfg.QueueSpans = 1, 4
	s := newTestStage(t, cfg, r, sink)
	s.next = &countingSink{TracesSink: sink, n: &out}
	ctx := context.Background()
	in := 0
	for n := range 2 { // each released at once, not waited for: two traces of 2 spans fill the queue of 4
		td := fixtures.StoveTrace(n, "", fixtures.ToolCall{Tool: "stir"})
		in += td.SpanCount()
		if err := s.ConsumeTraces(ctx, td); err != nil {
			t.Fatal(err)
		}
		s.tick(time.Now().Add(time.Hour), false)
	}
	held := s.Held()
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	refusedTD := fixtures.StoveTrace(99, "", fixtures.ToolCall{Tool: "stir"})
	err := s.ConsumeTraces(short, refusedTD)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ConsumeTraces with the queue full: %v, want the deadline's error", err)
	}
	if refusedTD.SpanCount() == 0 || s.Held() != held {
		t.Errorf("the refused batch was taken: %d spans left in it, %d traces held (was %d)", refusedTD.SpanCount(), s.Held(), held)
	}
	close(gate)
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if out.Load() != int64(in) {
		t.Errorf("%d spans out, want the %d accepted", out.Load(), in)
	}
}

type countingSink struct {
	*consumertest.TracesSink
	n *atomic.Int64
}

func (c *countingSink) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	c.n.Add(int64(td.SpanCount()))
	return c.TracesSink.ConsumeTraces(ctx, td)
}

// A group ended after its spans left gets a verdict span, in its last
// event's trace, under that event; a group ended with its spans still in
// hand writes on its last event.
func TestEndTargets(t *testing.T) {
	r := newRecorder()
	r.onEnd = func(at *Target) { at.Span().Attributes().PutBool("ended.here", true) }
	sink := new(consumertest.TracesSink)
	cfg := baseConfig()
	cfg.GroupTimeout = 90 * time.Second
	s := newTestStage(t, cfg, r, sink)
	clock := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return clock })
	ctx := context.Background()
	_ = s.ConsumeTraces(ctx, fixtures.StoveTrace(0, "left", fixtures.ToolCall{Tool: "stir"}))
	clock = clock.Add(time.Minute)
	s.Tick(clock) // judged and passed on
	clock = clock.Add(time.Minute)
	s.Tick(clock) // "left" ends idle, its spans gone
	_ = s.ConsumeTraces(ctx, fixtures.StoveTrace(1, "held", fixtures.ToolCall{Tool: "look"}))
	if err := s.Shutdown(ctx); err != nil { // "held" is released and ended in one batch
		t.Fatal(err)
	}
	var marked []string
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if _, ok := sp.Attributes().Get("ended.here"); ok {
						marked = append(marked, sp.Name()+" in "+ss.Scope().Name())
					}
				}
			}
		}
	}
	slices.Sort(marked)
	want := []string{
		VerdictSpanName + " in github.com/agentguard/agentguard/processor/test" + VerdictScopeSuffix,
		"execute_tool look in opentelemetry.instrumentation.genai",
	}
	if !slices.Equal(marked, want) {
		t.Errorf("end-of-group targets %v, want %v", marked, want)
	}
}

// Shutdown without Start, and with nothing consumed, leaves no goroutine.
func TestShutdownWithoutStart(t *testing.T) {
	before := runtime.NumGoroutine()
	s := newTestStage(t, baseConfig(), newRecorder(), new(consumertest.TracesSink))
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines before, %d after", before, after)
	}
}
