package probguard

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// metricAttrs are the self-metrics' options, built once as slices: passing
// them on with ... then allocates nothing on the hot path.
type metricAttrs struct {
	property                   []metric.RecordOption
	risk, violation, unknownSt []metric.AddOption
}

func newMetricAttrs(cfg *Config) *metricAttrs {
	prop := attribute.String("property", string(cfg.Property.Kind))
	kind := func(k string) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(prop, attribute.String("kind", k)))}
	}
	return &metricAttrs{
		property:  []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(prop))},
		risk:      kind(verdictattr.LabelRisk),
		violation: kind("violation"),
		unknownSt: kind(verdictattr.LabelUnknownState),
	}
}

func (a *metricAttrs) intervention(d guard.Decision) []metric.AddOption {
	switch {
	case d.Violation:
		return a.violation
	case !d.Known:
		return a.unknownSt
	}
	return a.risk
}
