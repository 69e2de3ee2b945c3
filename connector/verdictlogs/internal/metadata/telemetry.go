// SPDX-License-Identifier: Apache-2.0

package metadata

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentguard/agentguard/internal/selfmetric"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// The attribute keys the self-metrics are recorded with (metadata.yaml's
// attributes).
const (
	AttrCheck    = "check"
	AttrSeverity = "severity"
)

// CheckDecision is AttrCheck's value for a riskendpoint's decision (the
// decisions setting), beside the processors' checks.
const CheckDecision = "decision"

// The values of AttrSeverity, which are also the records' severity texts: a
// violation, a risk or an unknown state warns, a pass or a pending verdict
// informs.
const (
	SeverityWarn = "WARN"
	SeverityInfo = "INFO"
)

// attributeValues are the closed sets of values (metadata.yaml's enums).
func attributeValues() map[string][]string {
	return map[string][]string{
		AttrCheck:    {verdictattr.CheckTemporal, verdictattr.CheckProb, CheckDecision},
		AttrSeverity: {SeverityWarn, SeverityInfo},
	}
}

// TelemetryBuilder holds the connector's self-metrics.
type TelemetryBuilder struct {
	Records metric.Int64Counter
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
		Name: "otelcol_connector_verdictlogs_records", Field: &b.Records, Enabled: true, Unit: "{records}",
		Description: "Log records emitted, by check and severity.",
		Attributes:  []string{AttrCheck, AttrSeverity},
	}}
}
