// SPDX-License-Identifier: Apache-2.0

package metadata

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentguard/agentguard/internal/selfmetric"
	"github.com/agentguard/agentguard/internal/stage"
)

// The attribute keys the processor's own self-metrics are recorded with
// (metadata.yaml's attributes); the stage's are stage.Attr*.
const (
	AttrAssertion = "assertion"
	AttrVerdict   = "verdict"
)

// attributeValues are the closed sets of values (metadata.yaml's enums,
// with the included stage's): the verdicts are texpr's kinds as
// assertion.Verdict.VerdictName writes them.
func attributeValues() map[string][]string {
	values := stage.AttributeValues()
	values[AttrVerdict] = []string{"match", "failure", "pending", "error"}
	return values
}

// TelemetryBuilder holds the processor's self-metrics: its own and the
// holding stage's.
type TelemetryBuilder struct {
	Stage              stage.Metrics
	Verdicts           metric.Int64Counter
	EventsPerGroup     metric.Int64Histogram
	AssertionTriggered metric.Int64Counter
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
		Name: "otelcol_processor_temporalcheck_verdicts", Field: &b.Verdicts, Enabled: true, Unit: "{verdicts}",
		Description: "Verdicts decided, annotated on a span or not, by assertion and verdict.",
		Attributes:  []string{AttrAssertion, AttrVerdict},
	}, {
		Name: "otelcol_processor_temporalcheck_events_per_group", Field: &b.EventsPerGroup, Enabled: true, Unit: "{events}",
		Description: "Events in a group's sequence when it was evaluated.",
		Buckets:     []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10000},
	}, {
		Name: "otelcol_processor_temporalcheck_assertion_triggered", Field: &b.AssertionTriggered, Enabled: true, Unit: "{events}",
		Description: "Events at which an assertion was triggered (a predicate its expression can begin with held), by assertion.",
		Attributes:  []string{AttrAssertion},
	}}, b.Stage.Instruments("otelcol_processor_temporalcheck_")...)
}
