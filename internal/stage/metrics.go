// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	mathbits "math/bits"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/selfmetric"
	"github.com/agentguard/agentguard/internal/stage/tracebuffer"
)

// Metrics are the self-metrics of the stage, declared once here (and in
// metadata.yaml beside this file) for both processors: each records them under
// its own prefix (Instruments), beside its own.
type Metrics struct {
	TracesHeld          metric.Int64UpDownCounter
	GroupsOpen          metric.Int64UpDownCounter // dormant ones included
	GroupsDormant       metric.Int64UpDownCounter
	TracesReleasedEarly metric.Int64Counter // by reason
	LateSpans           metric.Int64Counter
	GroupsEndedEarly    metric.Int64Counter // by reason
	// GroupsHistoryIncomplete counts groups whose history may be incomplete,
	// by reason (warm_up, max_traces, out_of_order).
	GroupsHistoryIncomplete metric.Int64Counter
	// VerdictsHistoryIncomplete counts the verdicts evaluators report on such
	// a history, by the mark they carry.
	VerdictsHistoryIncomplete metric.Int64Counter
	Checkpoints               metric.Int64Counter // by result
	GroupsRestored            metric.Int64Counter
	GroupsResumed             metric.Int64Counter // kept after they ended idle, continued by a later turn
	ForwardFailures           metric.Int64Counter // batches lost: refused as permanent, or at shutdown's deadline
	ForwardRetries            metric.Int64Counter // refusals by the next consumer, each retried
	PredicateErrors           metric.Int64Counter
	PredicateHeld             metric.Int64Counter // by predicate
	SpansWithoutTraceID       metric.Int64Counter
	VerdictSpans              metric.Int64Counter
	QueueFullWaits            metric.Int64Counter
	EvaluationTime            metric.Float64Histogram
	OutOfOrderEvents          metric.Int64Counter
	SuspectedTypos            metric.Int64Counter // by kind: predicate, group_by, capture, budget
	SpansRefused              metric.Int64Counter // the storage could not journal them
	SpansReplayed             metric.Int64Counter // from the journal, at start
	GroupsHandedOver          metric.Int64Counter // by direction: in (taken over from the tier), out (given up)
}

// Instruments is the table of the stage's self-metrics, each named prefix
// and its key in metadata.yaml (prefix is otelcol_processor_<type>_).
func (m *Metrics) Instruments(prefix string) []selfmetric.Instrument {
	row := func(name string, field any, unit, description string, attrs ...string) selfmetric.Instrument {
		return selfmetric.Instrument{Name: prefix + name, Field: field, Enabled: true, Unit: unit, Description: description, Attributes: attrs}
	}
	evaluation := row("evaluation_time", &m.EvaluationTime, "s", "Time to judge the events of one trace, or of one batch judged on arrival.")
	evaluation.Buckets = []float64{0.000001, 0.00001, 0.0001, 0.001, 0.01, 0.1, 1}
	return []selfmetric.Instrument{
		row("traces_held", &m.TracesHeld, "{traces}", "Traces held, waiting to be complete."),
		row("groups_open", &m.GroupsOpen, "{groups}", "Groups open (their end not yet come), dormant ones included."),
		row("groups_dormant", &m.GroupsDormant, "{groups}", "Open groups idle for compact_after, kept in their saved form until their next trace, their end or a hand-over (a question about one rebuilds it for the answer only)."),
		row("traces_released_early", &m.TracesReleasedEarly, "{traces}", "Traces judged and released before they were complete, by reason.", AttrReason),
		row("late_spans", &m.LateSpans, "{spans}", "Spans that arrived after their trace was released; judged as the continuation of their group."),
		row("groups_ended_early", &m.GroupsEndedEarly, "{groups}", "Groups ended before their end (more open groups than max_traces), by reason; their end-of-group verdicts are reported.", AttrReason),
		row("groups_history_incomplete", &m.GroupsHistoryIncomplete, "{groups}", "Groups whose history may be incomplete, by reason; their verdicts carry agentguard.history.", AttrReason),
		row("verdicts_history_incomplete", &m.VerdictsHistoryIncomplete, "{verdicts}", "Verdicts reported on a history that may be incomplete, by the agentguard.history they carry.", AttrHistory),
		row("checkpoints", &m.Checkpoints, "{checkpoints}", "Checkpoints of the open groups written to the storage extension, by result.", AttrResult),
		row("groups_restored", &m.GroupsRestored, "{groups}", "Groups restored from the storage extension's checkpoint at start."),
		row("groups_resumed", &m.GroupsResumed, "{groups}", "Groups that ended (after group_timeout without a new trace, or a trace that is a group of its own at its release) and came back within retention (a later turn, late spans): continued where they were."),
		row("forward_failures", &m.ForwardFailures, "{batches}", "Batches of spans lost to the pipeline, logged once: refused by the next consumer as permanent, or still refused when shutdown's deadline came."),
		row("forward_retries", &m.ForwardRetries, "{refusals}", "Refusals of a batch by the next consumer; the batch is kept and tried again with backoff while incoming spans wait."),
		row("predicate_errors", &m.PredicateErrors, "{errors}", "OTTL evaluation errors; the predicate counts as false at that span."),
		row("predicate_held", &m.PredicateHeld, "{events}", "Events at which each predicate held, by predicate.", AttrPredicate),
		row("spans_without_trace_id", &m.SpansWithoutTraceID, "{spans}", "Spans without a trace ID, passed on unjudged."),
		row("verdict_spans", &m.VerdictSpans, "{spans}", "Verdict spans made for end-of-group verdicts decided after the group's spans had left."),
		row("queue_full_waits", &m.QueueFullWaits, "{batches}", "Batches of incoming spans that waited because the evaluators were behind, or the next consumer refused."),
		evaluation,
		row("suspected_typos", &m.SuspectedTypos, "{warnings}", "Predicates that did not hold once, a group_by attribute no trace carried, capture paths no call of their tool carried, and budgets whose attribute no span carried, in the first warn_typos_after of traffic, by kind; each logged at WARN with the nearest name seen.", AttrSuspect),
		row("spans_refused", &m.SpansRefused, "{spans}", "Incoming spans refused because the storage could not journal them (a full disk): nothing was taken, and the receiver answers with a retryable error."),
		row("spans_replayed", &m.SpansReplayed, "{spans}", "Spans replayed at start from the storage's journal: acknowledged before the collector stopped without passing them on (a crash)."),
		row("groups_handed_over", &m.GroupsHandedOver, "{groups}", "Conversations moved between collectors of a tier (a rescale): taken over from another member (in), or given up to one (out).", AttrDirection),
		row("out_of_order_events", &m.OutOfOrderEvents, "{events}", "Events judged after a later-starting event of their group (judged on arrival, or late); judged as the continuation of their group."),
	}
}

// The attribute keys of the stage's metrics.
const (
	AttrReason    = "reason"
	AttrPredicate = "predicate"
	AttrHistory   = "history" // the evaluators' count of marked verdicts
	AttrResult    = "result"
	AttrSuspect   = "suspect" // what a suspected typo is in
	AttrDirection = "direction"
)

// AttributeValues are the closed sets of values the stage records its
// metrics with (metadata.yaml's enums): why a trace left early, why a group
// ended early or was marked, a verdict's history mark, a write's result.
func AttributeValues() map[string][]string {
	return map[string][]string{
		AttrReason:    {tracebuffer.Evicted.String(), tracebuffer.Oversize.String(), tracebuffer.Shutdown.String(), endBound, markWarmUp, markRetention, markOutOfOrder, markRescale},
		AttrDirection: {directionIn, directionOut},
		AttrHistory:   {HistoryPartial.String(), HistoryOutOfOrder.String()},
		AttrResult:    {ResultOK, ResultError},
		AttrSuspect:   {kindPredicate, kindGroupBy, kindCapture, kindBudget},
	}
}

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
	optional map[string]bool    // predicates that may never hold: not warned about
}

func newPredicateWatch(names []string, after int, optional map[string]bool) *predicateWatch {
	w := &predicateWatch{names: names, after: int64(after), lastHeld: make([]atomic.Int64, len(names)), optional: optional}
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
		if silent := total - w.lastHeld[i].Load(); silent >= w.after && !w.optional[name] {
			warnings.Once("unheld-"+name, "a predicate has not held in a long run of events: check its tool or agent name and its convention; assertions over it pass without being tested",
				zap.String("predicate", name), zap.Int64("events", silent))
		}
	}
}
