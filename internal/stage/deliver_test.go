// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/agentguard/agentguard/internal/fixtures"
)

// refusing is a next consumer that refuses every batch while closed (as an
// exporter whose sending queue is full does) and passes them to its sink
// once open.
type refusing struct {
	*consumertest.TracesSink
	open    atomic.Bool
	refused atomic.Int64
	err     error
}

func newRefusing(err error) *refusing {
	return &refusing{TracesSink: new(consumertest.TracesSink), err: err}
}

func (r *refusing) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if !r.open.Load() {
		r.refused.Add(1)
		return r.err
	}
	return r.TracesSink.ConsumeTraces(ctx, td)
}

// counted is a counter that counts what it is given.
type counted struct {
	noop.Int64Counter
	n atomic.Int64
}

func (c *counted) Add(_ context.Context, n int64, _ ...metric.AddOption) { c.n.Add(n) }

var errQueueFull = errors.New("sending queue is full")

// A batch the next consumer refuses is kept and tried again until it is
// taken: every span accepted comes out, none twice.
func TestRefusedBatchIsRetriedNotLost(t *testing.T) {
	next := newRefusing(errQueueFull)
	s := newTestStage(t, baseConfig(), newRecorder(), next)
	retries := &counted{}
	s.tel.ForwardRetries = retries
	in := 0
	for n := range 20 {
		td := fixtures.StoveTrace(n, "", fixtures.ToolCall{Tool: "stir"})
		in += td.SpanCount()
		if err := s.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	s.tick(time.Now().Add(time.Hour), false)
	waitFor(t, func() bool { return next.refused.Load() >= 8 })
	next.open.Store(true)
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if next.SpanCount() != in {
		t.Errorf("%d spans out after the refusals, want the %d accepted", next.SpanCount(), in)
	}
	if retries.n.Load() != next.refused.Load() {
		t.Errorf("forward_retries %d, refusals %d", retries.n.Load(), next.refused.Load())
	}
}

// While the next consumer refuses, the retried batch keeps the backlog
// full: a new sender waits, and one whose context ends has handed over
// nothing, as with a pass-through whose exporter refuses.
func TestRefusalHoldsBackTheSender(t *testing.T) {
	next := newRefusing(errQueueFull)
	cfg := baseConfig()
	cfg.Workers, cfg.QueueSpans = 1, 4
	s := newTestStage(t, cfg, newRecorder(), next)
	ctx := context.Background()
	in := 0
	for n := range 2 {
		td := fixtures.StoveTrace(n, "", fixtures.ToolCall{Tool: "stir"})
		in += td.SpanCount()
		if err := s.ConsumeTraces(ctx, td); err != nil {
			t.Fatal(err)
		}
	}
	s.tick(time.Now().Add(time.Hour), false)
	waitFor(t, func() bool { return next.refused.Load() > 0 })
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	held := fixtures.StoveTrace(99, "", fixtures.ToolCall{Tool: "stir"})
	if err := s.ConsumeTraces(short, held); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ConsumeTraces while the next consumer refuses: %v, want the deadline's error", err)
	}
	if held.SpanCount() == 0 {
		t.Error("the batch held back was taken")
	}
	next.open.Store(true)
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if next.SpanCount() != in {
		t.Errorf("%d spans out, want the %d accepted", next.SpanCount(), in)
	}
}

// A refusal marked permanent will never be taken back: the batch is lost,
// counted, and nothing waits on it.
func TestPermanentRefusalIsCounted(t *testing.T) {
	next := newRefusing(consumererror.NewPermanent(errors.New("bad data")))
	s := newTestStage(t, baseConfig(), newRecorder(), next)
	lost := &counted{}
	s.tel.ForwardFailures = lost
	if err := s.ConsumeTraces(context.Background(), fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "stir"})); err != nil {
		t.Fatal(err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if lost.n.Load() != 1 || next.refused.Load() != 1 {
		t.Errorf("forward_failures %d after %d refusals, want 1 after 1", lost.n.Load(), next.refused.Load())
	}
}

// Shutdown's deadline ends the retries: Shutdown returns, and what was
// still refused is counted as lost.
func TestShutdownDeadlineEndsRetries(t *testing.T) {
	next := newRefusing(errQueueFull)
	s := newTestStage(t, baseConfig(), newRecorder(), next)
	lost := &counted{}
	s.tel.ForwardFailures = lost
	if err := s.ConsumeTraces(context.Background(), fixtures.StoveTrace(0, "", fixtures.ToolCall{Tool: "stir"})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Shutdown took %v past a deadline of 100ms", took)
	}
	if lost.n.Load() != 1 {
		t.Errorf("forward_failures %d, want 1", lost.n.Load())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// statusHost records the component status the stage reports.
type statusHost struct {
	mu     sync.Mutex
	events []componentstatus.Status
}

func (h *statusHost) GetExtensions() map[component.ID]component.Component { return nil }

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev.Status())
}

func (h *statusHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// While spans are refused, the stage's status is a recoverable error (a
// health probe on component status goes unhealthy); the next batch taken in
// makes it OK again. Only the changes are reported.
func TestRefusingIsReportedAsStatus(t *testing.T) {
	next := newRefusing(errQueueFull)
	cfg := baseConfig()
	cfg.Workers, cfg.QueueSpans = 1, 4
	s := newTestStage(t, cfg, newRecorder(), next)
	host := &statusHost{}
	if err := s.Start(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for n := range 2 {
		if err := s.ConsumeTraces(ctx, fixtures.StoveTrace(n, "", fixtures.ToolCall{Tool: "stir"})); err != nil {
			t.Fatal(err)
		}
	}
	s.tick(time.Now().Add(time.Hour), false)
	waitFor(t, func() bool { return next.refused.Load() > 0 })
	for range 2 {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		_ = s.ConsumeTraces(short, fixtures.StoveTrace(99, "", fixtures.ToolCall{Tool: "stir"}))
		cancel()
	}
	if got := host.statuses(); !slices.Equal(got, []componentstatus.Status{componentstatus.StatusRecoverableError}) {
		t.Fatalf("while refusing: %v, want one recoverable error", got)
	}
	next.open.Store(true)
	waitFor(t, func() bool {
		err := s.ConsumeTraces(ctx, fixtures.StoveTrace(100, "", fixtures.ToolCall{Tool: "stir"}))
		return err == nil
	})
	if got := host.statuses(); !slices.Equal(got, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusOK}) {
		t.Errorf("after: %v, want the error, then OK", got)
	}
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
