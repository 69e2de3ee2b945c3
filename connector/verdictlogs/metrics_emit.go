// SPDX-License-Identifier: Apache-2.0

package verdictlogs

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/agentguard/agentguard/connector/verdictlogs/internal/metadata"
)

// emit writes the changed series as one resource of metrics (no resource
// attributes: the service is a point attribute), one scope, the
// connector's.
func (m *verdictMetrics) emit(counters map[seriesKey]*counter, histograms map[seriesKey]*histogram) pmetric.Metrics {
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	now := pcommon.NewTimestampFromTime(m.now())
	if len(counters) > 0 {
		emitCounters(sm.Metrics().AppendEmpty(), counters, now)
	}
	if len(histograms) > 0 {
		emitHistograms(sm.Metrics().AppendEmpty(), histograms, now)
	}
	return md
}

func emitCounters(metric pmetric.Metric, counters map[seriesKey]*counter, now pcommon.Timestamp) {
	metric.SetName(MetricVerdicts)
	metric.SetUnit("{verdicts}")
	metric.SetDescription("Verdicts and probguard decisions written on spans, by check, assertion, service, score label and history mark.")
	sum := metric.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for key, c := range counters {
		dp := sum.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(c.start)
		dp.SetTimestamp(now)
		dp.SetIntValue(c.count)
		putKey(dp.Attributes(), key, true)
		putExemplar(dp.Exemplars().AppendEmpty(), c.last)
	}
}

func emitHistograms(metric pmetric.Metric, histograms map[seriesKey]*histogram, now pcommon.Timestamp) {
	metric.SetName(MetricPSafe)
	metric.SetDescription("P(stay safe) of each probguard decision written on a span, by assertion (the property) and service.")
	hist := metric.SetEmptyHistogram()
	hist.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for key, h := range histograms {
		dp := hist.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(h.start)
		dp.SetTimestamp(now)
		dp.SetCount(h.count)
		dp.SetSum(h.sum)
		dp.SetMin(h.min)
		dp.SetMax(h.max)
		dp.ExplicitBounds().FromRaw(pSafeBounds)
		dp.BucketCounts().FromRaw(h.buckets)
		putKey(dp.Attributes(), key, false)
		putExemplar(dp.Exemplars().AppendEmpty(), h.last)
	}
}

// putKey writes a series' attributes; history only when the verdicts are
// marked (as on the span event), label only for the verdict counts.
func putKey(attrs pcommon.Map, key seriesKey, withLabel bool) {
	if key.overflow {
		attrs.PutBool(AttrOverflow, true)
		return
	}
	attrs.PutStr(AttrCheck, key.check)
	attrs.PutStr(AttrAssertion, key.assertion)
	attrs.PutStr(AttrServiceName, key.service)
	if withLabel {
		attrs.PutStr(AttrLabel, key.label)
	}
	if key.history != "" {
		attrs.PutStr(AttrHistory, key.history)
	}
}

func putExemplar(ex pmetric.Exemplar, e exemplar) {
	ex.SetTraceID(e.traceID)
	ex.SetSpanID(e.spanID)
	ex.SetTimestamp(e.at)
	ex.SetDoubleValue(e.value)
}
