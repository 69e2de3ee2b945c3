// Package hold is the plumbing that temporalcheck and probguard share as
// processors that hold traces until they are complete: the buffer's bounds,
// the clock that releases traces, the hand-off to the next consumer, the
// traces-held gauge, and warnings logged once.
package hold

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/core/tracebuffer"
)

// minRemembered is the fewest released trace IDs kept to recognise late
// spans (about 50 bytes each), however small max_traces is.
const minRemembered = 10_000

// Bounds are a holding processor's waits and limits, each named in messages
// as its configuration field is.
type Bounds struct {
	Wait, RootWait, GroupTimeout time.Duration
	MaxTraces, MaxSpansPerTrace  int
}

// Validate reports every bound out of range.
func (b Bounds) Validate() error {
	return errors.Join(PositiveDuration("wait", b.Wait), NonNegativeDuration("root_wait", b.RootWait),
		PositiveDuration("group_timeout", b.GroupTimeout),
		PositiveInt("max_traces", b.MaxTraces), PositiveInt("max_spans_per_trace", b.MaxSpansPerTrace))
}

// Buffer is a trace buffer with these bounds; it remembers at least
// minRemembered released trace IDs.
func (b Bounds) Buffer() *tracebuffer.Buffer {
	return tracebuffer.New(tracebuffer.Config{
		Wait: b.Wait, RootWait: b.RootWait, MaxTraces: b.MaxTraces,
		MaxSpansPerTrace: b.MaxSpansPerTrace, RememberReleased: max(b.MaxTraces, minRemembered),
	})
}

// Interval checks deadlines often enough to release a trace within a quarter
// of its wait, between 10ms and 1s.
func (b Bounds) Interval() time.Duration {
	d := b.Wait
	if b.RootWait > 0 {
		d = min(d, b.RootWait)
	}
	return min(max(d/4, 10*time.Millisecond), time.Second)
}

// PositiveDuration reports a duration field that is not positive.
func PositiveDuration(field string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s: must be a positive duration, got %v", field, d)
	}
	return nil
}

// NonNegativeDuration reports a duration field that is negative.
func NonNegativeDuration(field string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%s: must not be negative, got %v", field, d)
	}
	return nil
}

// PositiveInt reports a count field that is not positive.
func PositiveInt(field string, v int) error {
	if v <= 0 {
		return fmt.Errorf("%s: must be positive, got %d", field, v)
	}
	return nil
}

// Clock calls a function at an interval, from Start until Stop.
type Clock struct {
	stop, done chan struct{}
}

// Start calls tick every interval in a goroutine of its own.
func (c *Clock) Start(every time.Duration, tick func()) {
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(c.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				tick()
			}
		}
	}()
}

// Stop ends the clock and waits for a tick under way; a clock never started
// stops at once.
func (c *Clock) Stop() {
	if c.stop == nil {
		return
	}
	close(c.stop)
	<-c.done
	c.stop = nil
}

// Forward passes every batch on and returns how many the next consumer
// refused, and the first error; a refused batch does not keep the others
// back. The spans were accepted when they came in, so the caller counts and
// logs a refusal rather than returning it: a sender that retried would
// send the spans that did pass a second time.
func Forward(ctx context.Context, next consumer.Traces, batches []ptrace.Traces) (refused int, first error) {
	for _, td := range batches {
		if err := next.ConsumeTraces(ctx, td); err != nil {
			refused++
			if first == nil {
				first = err
			}
		}
	}
	return refused, first
}

// ForwardCounted passes every batch on, and counts in refusedBatches, and
// logs once, the batches the next consumer refuses.
func ForwardCounted(ctx context.Context, next consumer.Traces, batches []ptrace.Traces, refusedBatches metric.Int64Counter, w *Warnings) {
	if refused, err := Forward(ctx, next, batches); refused > 0 {
		refusedBatches.Add(ctx, int64(refused))
		w.Once("forward", "the next consumer refused batches of spans; they are lost to this pipeline", zap.Int("batches", refused), zap.Error(err))
	}
}

// CountEarly counts in early, by reason, and logs once, a trace released
// before it was complete (a bound forced it out); other traces it ignores.
func CountEarly(ctx context.Context, t *tracebuffer.Trace, early metric.Int64Counter, w *Warnings) {
	if !t.Reason.Early() {
		return
	}
	reason := t.Reason.String()
	early.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
	w.Once("early-"+reason, "a trace was released before it was complete (raise max_traces or max_spans_per_trace)",
		zap.String("reason", reason), zap.Stringer("trace_id", t.ID))
}

// Gauge keeps an up-down counter equal to a size it is told.
type Gauge struct {
	counter metric.Int64UpDownCounter
	last    int64
}

// NewGauge wraps the counter.
func NewGauge(counter metric.Int64UpDownCounter) *Gauge { return &Gauge{counter: counter} }

// Record sets the gauge to n.
func (g *Gauge) Record(ctx context.Context, n int) {
	g.counter.Add(ctx, int64(n)-g.last)
	g.last = int64(n)
}

// Warnings logs a kind of decision not taken the first time it happens; the
// self-metrics count every occurrence. It is safe for concurrent use.
type Warnings struct {
	logger *zap.Logger
	mu     sync.Mutex
	warned map[string]bool
}

// NewWarnings logs to logger.
func NewWarnings(logger *zap.Logger) *Warnings {
	return &Warnings{logger: logger, warned: map[string]bool{}}
}

// Once logs msg at WARN if no warning of this kind was logged before.
func (w *Warnings) Once(kind, msg string, fields ...zap.Field) {
	w.mu.Lock()
	seen := w.warned[kind]
	w.warned[kind] = true
	w.mu.Unlock()
	if seen {
		return
	}
	w.logger.Warn(msg+" (logged once; see the self-metrics)", fields...)
}
