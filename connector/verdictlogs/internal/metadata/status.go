// Package metadata holds the verdictlogs connector's type, stability and
// self-metrics, in the shape mdatagen generates from ../../metadata.yaml
// (written by hand: mdatagen is not served by this machine's module proxy).
package metadata

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/metric"
)

var (
	Type      = component.MustNewType("verdictlogs")
	ScopeName = "github.com/agentguard/agentguard/connector/verdictlogs"
)

const TracesToLogsStability = component.StabilityLevelDevelopment

// TelemetryBuilder creates and holds the connector's self-metrics.
type TelemetryBuilder struct {
	Records metric.Int64Counter
}

// NewTelemetryBuilder creates the instruments from the component's meter.
func NewTelemetryBuilder(settings component.TelemetrySettings) (*TelemetryBuilder, error) {
	m := settings.MeterProvider.Meter(ScopeName)
	records, err := m.Int64Counter("otelcol_connector_verdictlogs_records",
		metric.WithDescription("Log records emitted, by check and severity."), metric.WithUnit("{records}"))
	return &TelemetryBuilder{Records: records}, err
}
