package metadata

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentguard/agentguard/internal/selfmetric"
)

// The attribute keys the self-metrics are recorded with (metadata.yaml's
// attributes).
const (
	AttrProperty  = "property"
	AttrKind      = "kind"
	AttrModel     = "model"
	AttrResult    = "result"
	AttrReason    = "reason"    // stage.AttrReason
	AttrPredicate = "predicate" // stage.AttrPredicate
	AttrHistory   = "history"   // stage.AttrHistory
)

// The values of AttrKind: what an intervention reported.
const (
	KindRisk         = "risk"
	KindViolation    = "violation"
	KindUnknownState = "unknown_state"
)

// The values of AttrModel: the model served, or the one learned online.
const (
	ModelServed  = "served"
	ModelLearned = "learned"
)

// The values of AttrResult: how a write of learn.output went.
const (
	ResultOK    = "ok"
	ResultError = "error"
)

// attributeValues are the closed sets of values (metadata.yaml's enums):
// the constants above, the property kinds of dtmc, and the stage's reasons: a
// trace's early release (evicted, oversize) and a group's early end
// (max_traces).
func attributeValues() map[string][]string {
	return map[string][]string{
		AttrProperty: {"always_safe", "bounded", "response"},
		AttrKind:     {KindRisk, KindViolation, KindUnknownState},
		AttrModel:    {ModelServed, ModelLearned},
		AttrResult:   {ResultOK, ResultError},
		AttrReason:   {"evicted", "oversize", "max_traces", "warm_up", "out_of_order"},
		AttrHistory:  {"partial", "out_of_order"},
	}
}

// TelemetryBuilder holds the processor's self-metrics.
type TelemetryBuilder struct {
	Interventions             metric.Int64Counter
	PSafe                     metric.Float64Histogram
	UnknownStates             metric.Int64Counter
	ModelAge                  metric.Float64Gauge
	PACCertified              metric.Int64Gauge
	InvalidTransitions        metric.Int64Counter
	ModelWrites               metric.Int64Counter
	TracesHeld                metric.Int64UpDownCounter
	TracesReleasedEarly       metric.Int64Counter
	LateSpans                 metric.Int64Counter
	PredicateErrors           metric.Int64Counter
	GroupsEndedEarly          metric.Int64Counter
	ForwardFailures           metric.Int64Counter
	ForwardRetries            metric.Int64Counter
	PredicateHeld             metric.Int64Counter
	SpansWithoutTraceID       metric.Int64Counter
	VerdictSpans              metric.Int64Counter
	QueueFullWaits            metric.Int64Counter
	GroupsHistoryIncomplete   metric.Int64Counter
	VerdictsHistoryIncomplete metric.Int64Counter
	Checkpoints               metric.Int64Counter
	GroupsRestored            metric.Int64Counter
	OutOfOrderEvents          metric.Int64Counter
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
		Name: "otelcol_processor_probguard_interventions", Field: &b.Interventions, Enabled: true, Unit: "{events}",
		Description: "Events reported on their span, by property and kind.",
		Attributes:  []string{AttrProperty, AttrKind},
	}, {
		Name: "otelcol_processor_probguard_p_safe", Field: &b.PSafe, Enabled: true, Unit: "1",
		Description: "P(stay safe) at each scored event, by property.",
		Attributes:  []string{AttrProperty},
		Buckets:     []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999},
	}, {
		Name: "otelcol_processor_probguard_unknown_states", Field: &b.UnknownStates, Enabled: true, Unit: "{events}",
		Description: "Events in a state the model never saw in training, reported or not (never taken as safe).",
	}, {
		Name: "otelcol_processor_probguard_model_age", Field: &b.ModelAge, Enabled: true, Unit: "s",
		Description: "Time since the served model was written: the model file's modification time, or when a learned model began to be served.",
	}, {
		Name: "otelcol_processor_probguard_pac_certified", Field: &b.PACCertified, Enabled: true, Unit: "1",
		Description: "1 if the model is (0.1, 0.05)-PAC certified for unsafe, else 0, by model; not recorded for a response property without unsafe.",
		Attributes:  []string{AttrModel},
	}, {
		Name: "otelcol_processor_probguard_invalid_transitions", Field: &b.InvalidTransitions, Enabled: true, Unit: "{transitions}",
		Description: "Moves of the live traffic that valid_transitions forbid; online learning does not count them.",
	}, {
		Name: "otelcol_processor_probguard_model_writes", Field: &b.ModelWrites, Enabled: true, Unit: "{writes}",
		Description: "Writes of learn.output, by result; after an error the previous file is intact.",
		Attributes:  []string{AttrResult},
	}, {
		Name: "otelcol_processor_probguard_traces_held", Field: &b.TracesHeld, Enabled: true, Unit: "{traces}",
		Description: "Traces held, waiting to be complete.",
	}, {
		Name: "otelcol_processor_probguard_traces_released_early", Field: &b.TracesReleasedEarly, Enabled: true, Unit: "{traces}",
		Description: "Traces scored and released before they were complete, by reason.",
		Attributes:  []string{AttrReason},
	}, {
		Name: "otelcol_processor_probguard_late_spans", Field: &b.LateSpans, Enabled: true, Unit: "{spans}",
		Description: "Spans that arrived after their trace was released; scored as the continuation of their group.",
	}, {
		Name: "otelcol_processor_probguard_predicate_errors", Field: &b.PredicateErrors, Enabled: true, Unit: "{errors}",
		Description: "OTTL evaluation errors; the predicate counts as false at that span.",
	}, {
		Name: "otelcol_processor_probguard_groups_ended_early", Field: &b.GroupsEndedEarly, Enabled: true, Unit: "{groups}",
		Description: "Groups ended before group_timeout because more than max_traces were open, by reason.",
		Attributes:  []string{AttrReason},
	}, {
		Name: "otelcol_processor_probguard_forward_failures", Field: &b.ForwardFailures, Enabled: true, Unit: "{batches}",
		Description: "Batches of spans lost to the pipeline, logged once: refused by the next consumer as permanent, or still refused when shutdown's deadline came.",
	}, {
		Name: "otelcol_processor_probguard_forward_retries", Field: &b.ForwardRetries, Enabled: true, Unit: "{refusals}",
		Description: "Refusals of a batch by the next consumer; the batch is kept and tried again with backoff while incoming spans wait.",
	}, {
		Name: "otelcol_processor_probguard_predicate_held", Field: &b.PredicateHeld, Enabled: true, Unit: "{events}",
		Description: "Events at which each predicate held, by predicate.",
		Attributes:  []string{AttrPredicate},
	}, {
		Name: "otelcol_processor_probguard_spans_without_trace_id", Field: &b.SpansWithoutTraceID, Enabled: true, Unit: "{spans}",
		Description: "Spans without a trace ID, passed on unjudged.",
	}, {
		Name: "otelcol_processor_probguard_verdict_spans", Field: &b.VerdictSpans, Enabled: true, Unit: "{spans}",
		Description: "Verdict spans made for end-of-group verdicts decided after the group's spans had left.",
	}, {
		Name: "otelcol_processor_probguard_queue_full_waits", Field: &b.QueueFullWaits, Enabled: true, Unit: "{batches}",
		Description: "Batches of incoming spans that waited because the evaluators were behind.",
	}, {
		Name: "otelcol_processor_probguard_groups_history_incomplete", Field: &b.GroupsHistoryIncomplete, Enabled: true, Unit: "{groups}",
		Description: "Groups whose history may be incomplete, by reason; their verdicts carry agentguard.history.",
		Attributes:  []string{AttrReason},
	}, {
		Name: "otelcol_processor_probguard_verdicts_history_incomplete", Field: &b.VerdictsHistoryIncomplete, Enabled: true, Unit: "{verdicts}",
		Description: "Verdicts reported on a history that may be incomplete, by the agentguard.history they carry.",
		Attributes:  []string{AttrHistory},
	}, {
		Name: "otelcol_processor_probguard_checkpoints", Field: &b.Checkpoints, Enabled: true, Unit: "{checkpoints}",
		Description: "Checkpoints of the open groups written to the storage extension, by result.",
		Attributes:  []string{AttrResult},
	}, {
		Name: "otelcol_processor_probguard_groups_restored", Field: &b.GroupsRestored, Enabled: true, Unit: "{groups}",
		Description: "Groups restored from the storage extension's checkpoint at start.",
	}, {
		Name: "otelcol_processor_probguard_out_of_order_events", Field: &b.OutOfOrderEvents, Enabled: true, Unit: "{events}",
		Description: "Events (score: on_arrival) that arrived after a later-starting event of their group was scored; scored as the continuation of their group.",
	}}
}
