// SPDX-License-Identifier: Apache-2.0

package metadata

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentguard/agentguard/internal/selfmetric"
	"github.com/agentguard/agentguard/internal/stage"
)

// The attribute keys the self-metrics are recorded with (metadata.yaml's
// attributes).
const (
	AttrProperty = "property"
	AttrKind     = "kind"
	AttrModel    = "model"
	AttrResult   = "result" // also the stage's, for checkpoints
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

// attributeValues are the closed sets of values (metadata.yaml's enums,
// with the included stage's): the constants above and the property kinds of
// dtmc.
func attributeValues() map[string][]string {
	values := stage.AttributeValues()
	values[AttrProperty] = []string{"always_safe", "bounded", "response"}
	values[AttrKind] = []string{KindRisk, KindViolation, KindUnknownState}
	values[AttrModel] = []string{ModelServed, ModelLearned}
	return values
}

// TelemetryBuilder holds the processor's self-metrics: its own and the
// holding stage's.
type TelemetryBuilder struct {
	Stage              stage.Metrics
	Interventions      metric.Int64Counter
	PSafe              metric.Float64Histogram
	UnknownStates      metric.Int64Counter
	ModelAge           metric.Float64Gauge
	PACCertified       metric.Int64Gauge
	InvalidTransitions metric.Int64Counter
	ModelWrites        metric.Int64Counter
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
	return append([]selfmetric.Instrument{{
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
	}}, b.Stage.Instruments("otelcol_processor_probguard_")...)
}
