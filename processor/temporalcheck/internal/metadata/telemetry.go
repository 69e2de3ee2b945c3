package metadata

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"
)

// TelemetryBuilder creates and holds the processor's self-metrics.
type TelemetryBuilder struct {
	Verdicts            metric.Int64Counter
	TracesHeld          metric.Int64UpDownCounter
	TracesReleasedEarly metric.Int64Counter
	LateSpans           metric.Int64Counter
	EventsPerGroup      metric.Int64Histogram
	EvaluationTime      metric.Float64Histogram
	PredicateErrors     metric.Int64Counter
	ForwardFailures     metric.Int64Counter
	GroupsEndedEarly    metric.Int64Counter
	PredicateHeld       metric.Int64Counter
	SpansWithoutTraceID metric.Int64Counter
	VerdictSpans        metric.Int64Counter
	QueueFullWaits      metric.Int64Counter
}

// NewTelemetryBuilder creates the instruments from the component's meter.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	m := settings.MeterProvider.Meter(ScopeName)
	var b TelemetryBuilder
	var err, errs error
	b.Verdicts, err = m.Int64Counter("otelcol_processor_temporalcheck_verdicts",
		metric.WithDescription("Verdicts reported, by assertion and verdict (failure, match, pending, error)."), metric.WithUnit("{verdicts}"))
	errs = errors.Join(errs, err)
	b.TracesHeld, err = m.Int64UpDownCounter("otelcol_processor_temporalcheck_traces_held",
		metric.WithDescription("Traces held, waiting to be complete."), metric.WithUnit("{traces}"))
	errs = errors.Join(errs, err)
	b.TracesReleasedEarly, err = m.Int64Counter("otelcol_processor_temporalcheck_traces_released_early",
		metric.WithDescription("Traces evaluated and released before they were complete, by reason."), metric.WithUnit("{traces}"))
	errs = errors.Join(errs, err)
	b.LateSpans, err = m.Int64Counter("otelcol_processor_temporalcheck_late_spans",
		metric.WithDescription("Spans that arrived after their trace was released; they pass through unannotated."), metric.WithUnit("{spans}"))
	errs = errors.Join(errs, err)
	b.EventsPerGroup, err = m.Int64Histogram("otelcol_processor_temporalcheck_events_per_group",
		metric.WithDescription("Events in a group's sequence when it was evaluated."), metric.WithUnit("{events}"),
		metric.WithExplicitBucketBoundaries(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10000))
	errs = errors.Join(errs, err)
	b.EvaluationTime, err = m.Float64Histogram("otelcol_processor_temporalcheck_evaluation_time",
		metric.WithDescription("Time to evaluate the assertions over one released trace."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1))
	errs = errors.Join(errs, err)
	b.PredicateErrors, err = m.Int64Counter("otelcol_processor_temporalcheck_predicate_errors",
		metric.WithDescription("OTTL evaluation errors; the predicate counts as false at that span."), metric.WithUnit("{errors}"))
	errs = errors.Join(errs, err)
	b.ForwardFailures, err = m.Int64Counter("otelcol_processor_temporalcheck_forward_failures",
		metric.WithDescription("Batches of spans the next consumer refused; they are logged, not returned to the sender."), metric.WithUnit("{batches}"))
	errs = errors.Join(errs, err)
	b.GroupsEndedEarly, err = m.Int64Counter("otelcol_processor_temporalcheck_groups_ended_early",
		metric.WithDescription("Groups ended before their end (more open groups than max_traces), by reason; their end-of-group verdicts are reported."), metric.WithUnit("{groups}"))
	errs = errors.Join(errs, err)
	b.PredicateHeld, err = m.Int64Counter("otelcol_processor_temporalcheck_predicate_held",
		metric.WithDescription("Events at which each predicate held, by predicate."), metric.WithUnit("{events}"))
	errs = errors.Join(errs, err)
	b.SpansWithoutTraceID, err = m.Int64Counter("otelcol_processor_temporalcheck_spans_without_trace_id",
		metric.WithDescription("Spans without a trace ID, passed on unjudged."), metric.WithUnit("{spans}"))
	errs = errors.Join(errs, err)
	b.VerdictSpans, err = m.Int64Counter("otelcol_processor_temporalcheck_verdict_spans",
		metric.WithDescription("Verdict spans made for end-of-group verdicts decided after the group's spans had left."), metric.WithUnit("{spans}"))
	errs = errors.Join(errs, err)
	b.QueueFullWaits, err = m.Int64Counter("otelcol_processor_temporalcheck_queue_full_waits",
		metric.WithDescription("Batches of incoming spans that waited because the evaluators were behind."), metric.WithUnit("{batches}"))
	errs = errors.Join(errs, err)
	return &b, errs
}
