package metadata

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"
)

// TelemetryBuilder creates and holds the processor's self-metrics.
type TelemetryBuilder struct {
	Interventions       metric.Int64Counter
	PSafe               metric.Float64Histogram
	UnknownStates       metric.Int64Counter
	ModelAge            metric.Float64Gauge
	PACCertified        metric.Int64Gauge
	InvalidTransitions  metric.Int64Counter
	ModelWrites         metric.Int64Counter
	TracesHeld          metric.Int64UpDownCounter
	TracesReleasedEarly metric.Int64Counter
	LateSpans           metric.Int64Counter
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
	b.Interventions, err = m.Int64Counter("otelcol_processor_probguard_interventions",
		metric.WithDescription("Events reported, by property and kind (risk, violation, unknown_state)."), metric.WithUnit("{events}"))
	errs = errors.Join(errs, err)
	b.PSafe, err = m.Float64Histogram("otelcol_processor_probguard_p_safe",
		metric.WithDescription("P(stay safe) at each scored event, by property."), metric.WithUnit("1"),
		metric.WithExplicitBucketBoundaries(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999))
	errs = errors.Join(errs, err)
	b.UnknownStates, err = m.Int64Counter("otelcol_processor_probguard_unknown_states",
		metric.WithDescription("Events in a state the model never saw in training (never taken as safe)."), metric.WithUnit("{events}"))
	errs = errors.Join(errs, err)
	b.ModelAge, err = m.Float64Gauge("otelcol_processor_probguard_model_age",
		metric.WithDescription("Time since the served model file was last modified."), metric.WithUnit("s"))
	errs = errors.Join(errs, err)
	b.PACCertified, err = m.Int64Gauge("otelcol_processor_probguard_pac_certified",
		metric.WithDescription("1 if the model is (0.1, 0.05)-PAC certified, else 0, by model (served, learned)."), metric.WithUnit("1"))
	errs = errors.Join(errs, err)
	b.InvalidTransitions, err = m.Int64Counter("otelcol_processor_probguard_invalid_transitions",
		metric.WithDescription("Moves of the live traffic that valid_transitions forbid; online learning does not count them."), metric.WithUnit("{transitions}"))
	errs = errors.Join(errs, err)
	b.ModelWrites, err = m.Int64Counter("otelcol_processor_probguard_model_writes",
		metric.WithDescription("Writes of learn.output, by result (ok, error)."), metric.WithUnit("{writes}"))
	errs = errors.Join(errs, err)
	b.TracesHeld, err = m.Int64UpDownCounter("otelcol_processor_probguard_traces_held",
		metric.WithDescription("Traces held, waiting to be complete."), metric.WithUnit("{traces}"))
	errs = errors.Join(errs, err)
	b.TracesReleasedEarly, err = m.Int64Counter("otelcol_processor_probguard_traces_released_early",
		metric.WithDescription("Traces scored and released before they were complete, by reason."), metric.WithUnit("{traces}"))
	errs = errors.Join(errs, err)
	b.LateSpans, err = m.Int64Counter("otelcol_processor_probguard_late_spans",
		metric.WithDescription("Spans that arrived after their trace was released; scored as the continuation of their group."), metric.WithUnit("{spans}"))
	errs = errors.Join(errs, err)
	b.PredicateErrors, err = m.Int64Counter("otelcol_processor_probguard_predicate_errors",
		metric.WithDescription("OTTL evaluation errors; the predicate counts as false at that span."), metric.WithUnit("{errors}"))
	errs = errors.Join(errs, err)
	b.GroupsEndedEarly, err = m.Int64Counter("otelcol_processor_probguard_groups_ended_early",
		metric.WithDescription("Groups ended before group_timeout because more than max_traces were open."), metric.WithUnit("{groups}"))
	errs = errors.Join(errs, err)
	b.ForwardFailures, err = m.Int64Counter("otelcol_processor_probguard_forward_failures",
		metric.WithDescription("Batches of spans the next consumer refused; they are logged, not returned to the sender."), metric.WithUnit("{batches}"))
	errs = errors.Join(errs, err)
	b.PredicateHeld, err = m.Int64Counter("otelcol_processor_probguard_predicate_held",
		metric.WithDescription("Events at which each predicate held, by predicate."), metric.WithUnit("{events}"))
	errs = errors.Join(errs, err)
	b.SpansWithoutTraceID, err = m.Int64Counter("otelcol_processor_probguard_spans_without_trace_id",
		metric.WithDescription("Spans without a trace ID, passed on unjudged."), metric.WithUnit("{spans}"))
	errs = errors.Join(errs, err)
	b.VerdictSpans, err = m.Int64Counter("otelcol_processor_probguard_verdict_spans",
		metric.WithDescription("Verdict spans made for end-of-group verdicts decided after the group's spans had left."), metric.WithUnit("{spans}"))
	errs = errors.Join(errs, err)
	b.QueueFullWaits, err = m.Int64Counter("otelcol_processor_probguard_queue_full_waits",
		metric.WithDescription("Batches of incoming spans that waited because the evaluators were behind."), metric.WithUnit("{batches}"))
	errs = errors.Join(errs, err)
	return &b, errs
}
