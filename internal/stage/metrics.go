package stage

import (
	"context"
	mathbits "math/bits"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
)

// Metrics are the self-metrics of the stage, created by each processor's
// telemetry builder under its own names. EvaluationTime may be nil, and
// OutOfOrderEvents without OnArrival.
type Metrics struct {
	TracesHeld          metric.Int64UpDownCounter
	TracesReleasedEarly metric.Int64Counter // by reason
	LateSpans           metric.Int64Counter
	GroupsEndedEarly    metric.Int64Counter // by reason
	// GroupsHistoryIncomplete counts groups whose history may be incomplete,
	// by reason (warm_up, max_traces, out_of_order).
	GroupsHistoryIncomplete metric.Int64Counter
	Checkpoints             metric.Int64Counter // by result
	GroupsRestored          metric.Int64Counter
	ForwardFailures         metric.Int64Counter // batches lost: refused as permanent, or at shutdown's deadline
	ForwardRetries          metric.Int64Counter // refusals by the next consumer, each retried
	PredicateErrors         metric.Int64Counter
	PredicateHeld           metric.Int64Counter // by predicate
	SpansWithoutTraceID     metric.Int64Counter
	VerdictSpans            metric.Int64Counter
	QueueFullWaits          metric.Int64Counter
	EvaluationTime          metric.Float64Histogram
	OutOfOrderEvents        metric.Int64Counter // with OnArrival only
}

// The attribute keys of the stage's metrics.
const (
	AttrReason    = "reason"
	AttrPredicate = "predicate"
	AttrHistory   = "history" // the evaluators' count of marked verdicts
	AttrResult    = "result"
)

// The values of AttrResult.
const (
	ResultOK    = "ok"
	ResultError = "error"
)

// predicateWatch counts, per predicate, the events where it held, and logs
// once a predicate that has not held in a long run of events: a misspelt
// tool or agent name makes every assertion over it pass silently.
type predicateWatch struct {
	names    []string
	attrs    []metric.AddOption // per predicate, made once
	after    int64              // 0: never warn
	events   atomic.Int64       // events seen by every worker
	lastHeld []atomic.Int64     // per predicate, the events count when it last held
}

func newPredicateWatch(names []string, after int) *predicateWatch {
	w := &predicateWatch{names: names, after: int64(after), lastHeld: make([]atomic.Int64, len(names))}
	for _, n := range names {
		w.attrs = append(w.attrs, metric.WithAttributes(attribute.String(AttrPredicate, n)))
	}
	return w
}

// tally is one worker's counts since its last flush.
type tally struct {
	events int64
	held   []int64
}

func (w *predicateWatch) newTally() tally { return tally{held: make([]int64, len(w.names))} }

func (t *tally) add(bits uint64) {
	t.events++
	if n := len(t.held); n < 64 {
		bits &= 1<<n - 1 // a latch's inner conditions sit above the predicates
	}
	for ; bits != 0; bits &= bits - 1 {
		t.held[mathbits.TrailingZeros64(bits)]++
	}
}

// flush adds a worker's counts to the metric and warns about predicates
// silent for too long.
func (w *predicateWatch) flush(ctx context.Context, t *tally, held metric.Int64Counter, warnings *Warnings) {
	if t.events == 0 {
		return
	}
	total := w.events.Add(t.events)
	for i, n := range t.held {
		if n > 0 {
			held.Add(ctx, n, w.attrs[i])
			w.lastHeld[i].Store(total)
			t.held[i] = 0
		}
	}
	t.events = 0
	if w.after <= 0 {
		return
	}
	for i, name := range w.names {
		if silent := total - w.lastHeld[i].Load(); silent >= w.after {
			warnings.Once("unheld-"+name, "a predicate has not held in a long run of events: check its tool or agent name and its convention; assertions over it pass without being tested",
				zap.String("predicate", name), zap.Int64("events", silent))
		}
	}
}
