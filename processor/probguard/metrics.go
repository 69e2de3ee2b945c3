// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/stage"
	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/processor/probguard/internal/metadata"
)

// metricAttrs are the self-metrics' options, built once as slices: passing
// them on with ... then allocates nothing on the hot path.
type metricAttrs struct {
	property                   []metric.RecordOption
	risk, violation, unknownSt []metric.AddOption
	partial, outOfOrder        metric.AddOption
}

func newMetricAttrs(cfg *Config) *metricAttrs {
	prop := attribute.String(metadata.AttrProperty, string(cfg.Property.Kind))
	kind := func(k string) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(prop, attribute.String(metadata.AttrKind, k)))}
	}
	return &metricAttrs{
		property:   []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(prop))},
		risk:       kind(metadata.KindRisk),
		violation:  kind(metadata.KindViolation),
		unknownSt:  kind(metadata.KindUnknownState),
		partial:    metric.WithAttributes(attribute.String(stage.AttrHistory, verdictattr.HistoryPartial)),
		outOfOrder: metric.WithAttributes(attribute.String(stage.AttrHistory, verdictattr.HistoryOutOfOrder)),
	}
}

// history is the marked-verdicts counter's attribute of a mark.
func (a *metricAttrs) history(mark string) metric.AddOption {
	if mark == verdictattr.HistoryPartial {
		return a.partial
	}
	return a.outOfOrder
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
