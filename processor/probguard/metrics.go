package probguard

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentguard/agentguard/internal/core/guard"
)

// metricAttrs are the self-metrics' attribute sets, built once: recording
// on the hot path then allocates nothing.
type metricAttrs struct {
	property                   metric.MeasurementOption
	risk, violation, unknownSt metric.MeasurementOption
}

func newMetricAttrs(cfg *Config) *metricAttrs {
	prop := attribute.String("property", string(cfg.Property.Kind))
	kind := func(k string) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(prop, attribute.String("kind", k)))
	}
	return &metricAttrs{
		property:  metric.WithAttributeSet(attribute.NewSet(prop)),
		risk:      kind(guard.LabelRisk),
		violation: kind("violation"),
		unknownSt: kind(guard.LabelUnknown),
	}
}

func (a *metricAttrs) intervention(d guard.Decision) metric.MeasurementOption {
	switch {
	case d.Violation:
		return a.violation
	case !d.Known:
		return a.unknownSt
	}
	return a.risk
}
