package metadata

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentguard/agentguard/internal/selfmetric"
)

// The attribute keys the self-metrics are recorded with (metadata.yaml's
// attributes).
const (
	AttrAssertion = "assertion"
	AttrVerdict   = "verdict"
	AttrReason    = "reason"    // stage.AttrReason
	AttrResult    = "result"    // stage.AttrResult
	AttrPredicate = "predicate" // stage.AttrPredicate
	AttrHistory   = "history"   // stage.AttrHistory
)

// attributeValues are the closed sets of values (metadata.yaml's enums):
// the verdicts are texpr's kinds as assertion.Verdict.VerdictName writes them;
// the reasons are the stage's: a trace's early release (evicted, oversize)
// and a group's early end (max_traces).
func attributeValues() map[string][]string {
	return map[string][]string{
		AttrVerdict: {"match", "failure", "pending", "error"},
		AttrReason:  {"evicted", "oversize", "max_traces", "warm_up", "out_of_order"},
		AttrHistory: {"partial", "out_of_order"},
		AttrResult:  {ResultOK, ResultError},
	}
}

// The values of AttrResult: how a checkpoint write went.
const (
	ResultOK    = "ok"    // stage.ResultOK
	ResultError = "error" // stage.ResultError
)

// TelemetryBuilder holds the processor's self-metrics.
type TelemetryBuilder struct {
	Verdicts                  metric.Int64Counter
	TracesHeld                metric.Int64UpDownCounter
	TracesReleasedEarly       metric.Int64Counter
	LateSpans                 metric.Int64Counter
	EventsPerGroup            metric.Int64Histogram
	EvaluationTime            metric.Float64Histogram
	PredicateErrors           metric.Int64Counter
	ForwardFailures           metric.Int64Counter
	ForwardRetries            metric.Int64Counter
	GroupsEndedEarly          metric.Int64Counter
	PredicateHeld             metric.Int64Counter
	SpansWithoutTraceID       metric.Int64Counter
	VerdictSpans              metric.Int64Counter
	QueueFullWaits            metric.Int64Counter
	AssertionTriggered        metric.Int64Counter
	GroupsHistoryIncomplete   metric.Int64Counter
	VerdictsHistoryIncomplete metric.Int64Counter
	Checkpoints               metric.Int64Counter
	GroupsRestored            metric.Int64Counter
}

// NewTelemetryBuilder creates the instruments of the table from the
// component's meter.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	var b TelemetryBuilder
	return &b, selfmetric.Build(settings.MeterProvider.Meter(ScopeName), b.instruments())
}

// instruments is the table of the self-metrics, one row a metric; its kind
// is its field's type. A new metric is a field, a row here and its entry in
// metadata.yaml (then documentation.md is regenerated).
func (b *TelemetryBuilder) instruments() []selfmetric.Instrument {
	return []selfmetric.Instrument{{
		Name: "otelcol_processor_temporalcheck_verdicts", Field: &b.Verdicts, Enabled: true, Unit: "{verdicts}",
		Description: "Verdicts decided, annotated on a span or not, by assertion and verdict.",
		Attributes:  []string{AttrAssertion, AttrVerdict},
	}, {
		Name: "otelcol_processor_temporalcheck_traces_held", Field: &b.TracesHeld, Enabled: true, Unit: "{traces}",
		Description: "Traces held, waiting to be complete.",
	}, {
		Name: "otelcol_processor_temporalcheck_traces_released_early", Field: &b.TracesReleasedEarly, Enabled: true, Unit: "{traces}",
		Description: "Traces evaluated and released before they were complete, by reason.",
		Attributes:  []string{AttrReason},
	}, {
		Name: "otelcol_processor_temporalcheck_late_spans", Field: &b.LateSpans, Enabled: true, Unit: "{spans}",
		Description: "Spans that arrived after their trace was released; they pass through unannotated.",
	}, {
		Name: "otelcol_processor_temporalcheck_events_per_group", Field: &b.EventsPerGroup, Enabled: true, Unit: "{events}",
		Description: "Events in a group's sequence when it was evaluated.",
		Buckets:     []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10000},
	}, {
		Name: "otelcol_processor_temporalcheck_evaluation_time", Field: &b.EvaluationTime, Enabled: true, Unit: "s",
		Description: "Time to evaluate the assertions over one released trace.",
		Buckets:     []float64{1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1},
	}, {
		Name: "otelcol_processor_temporalcheck_predicate_errors", Field: &b.PredicateErrors, Enabled: true, Unit: "{errors}",
		Description: "OTTL evaluation errors; the predicate counts as false at that span.",
	}, {
		Name: "otelcol_processor_temporalcheck_forward_failures", Field: &b.ForwardFailures, Enabled: true, Unit: "{batches}",
		Description: "Batches of spans lost to the pipeline, logged once: refused by the next consumer as permanent, or still refused when shutdown's deadline came.",
	}, {
		Name: "otelcol_processor_temporalcheck_forward_retries", Field: &b.ForwardRetries, Enabled: true, Unit: "{refusals}",
		Description: "Refusals of a batch by the next consumer; the batch is kept and tried again with backoff while incoming spans wait.",
	}, {
		Name: "otelcol_processor_temporalcheck_groups_ended_early", Field: &b.GroupsEndedEarly, Enabled: true, Unit: "{groups}",
		Description: "Groups ended before their end (more open groups than max_traces), by reason; their end-of-group verdicts are reported.",
		Attributes:  []string{AttrReason},
	}, {
		Name: "otelcol_processor_temporalcheck_predicate_held", Field: &b.PredicateHeld, Enabled: true, Unit: "{events}",
		Description: "Events at which each predicate held, by predicate.",
		Attributes:  []string{AttrPredicate},
	}, {
		Name: "otelcol_processor_temporalcheck_spans_without_trace_id", Field: &b.SpansWithoutTraceID, Enabled: true, Unit: "{spans}",
		Description: "Spans without a trace ID, passed on unjudged.",
	}, {
		Name: "otelcol_processor_temporalcheck_verdict_spans", Field: &b.VerdictSpans, Enabled: true, Unit: "{spans}",
		Description: "Verdict spans made for end-of-group verdicts decided after the group's spans had left.",
	}, {
		Name: "otelcol_processor_temporalcheck_queue_full_waits", Field: &b.QueueFullWaits, Enabled: true, Unit: "{batches}",
		Description: "Batches of incoming spans that waited because the evaluators were behind.",
	}, {
		Name: "otelcol_processor_temporalcheck_assertion_triggered", Field: &b.AssertionTriggered, Enabled: true, Unit: "{events}",
		Description: "Events at which an assertion was triggered (a predicate its expression can begin with held), by assertion.",
		Attributes:  []string{AttrAssertion},
	}, {
		Name: "otelcol_processor_temporalcheck_groups_history_incomplete", Field: &b.GroupsHistoryIncomplete, Enabled: true, Unit: "{groups}",
		Description: "Groups whose history may be incomplete, by reason; their verdicts carry agentguard.history.",
		Attributes:  []string{AttrReason},
	}, {
		Name: "otelcol_processor_temporalcheck_verdicts_history_incomplete", Field: &b.VerdictsHistoryIncomplete, Enabled: true, Unit: "{verdicts}",
		Description: "Verdicts reported on a history that may be incomplete, by the agentguard.history they carry.",
		Attributes:  []string{AttrHistory},
	}, {
		Name: "otelcol_processor_temporalcheck_checkpoints", Field: &b.Checkpoints, Enabled: true, Unit: "{checkpoints}",
		Description: "Checkpoints of the open groups written to the storage extension, by result.",
		Attributes:  []string{AttrResult},
	}, {
		Name: "otelcol_processor_temporalcheck_groups_restored", Field: &b.GroupsRestored, Enabled: true, Unit: "{groups}",
		Description: "Groups restored from the storage extension's checkpoint at start.",
	}}
}
