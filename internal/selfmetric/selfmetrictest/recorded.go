// SPDX-License-Identifier: Apache-2.0

package selfmetrictest

import (
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// RecordedDiff lists every way the metrics a component recorded under its
// scope disagree with metadata.yaml: a metric it does not declare, another
// kind, value type, monotonicity or bucket boundaries, a data point whose
// attribute keys are not exactly the declared ones, a value outside an
// attribute's enum. The Go table can agree with metadata.yaml while the code
// records with keys of its own; this is what catches it.
func RecordedDiff(md *Metadata, scope string, rm metricdata.ResourceMetrics) []string {
	var out []string
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != scope {
			continue
		}
		for _, got := range sm.Metrics {
			out = append(out, recordedMetric(md, got)...)
		}
	}
	return out
}

// recorded is what a metric's data says about its shape.
type recorded struct {
	kind, valueType string
	monotonic       bool
	bounds          [][]float64 // a histogram's, per data point
	points          []attribute.Set
}

func recordedMetric(md *Metadata, got metricdata.Metrics) []string {
	m, ok := md.Telemetry.Metrics[strings.TrimPrefix(got.Name, "otelcol_")]
	if !ok || !strings.HasPrefix(got.Name, "otelcol_") {
		return []string{fmt.Sprintf("%s: recorded, not declared in metadata.yaml", got.Name)}
	}
	r, err := shapeOf(got.Data)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", got.Name, err)}
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, got.Name+": "+fmt.Sprintf(format, args...)) }
	if r.kind != m.kind() || r.valueType != m.valueType() {
		add("recorded as a %s of %s values, declared a %s of %s values", r.kind, r.valueType, m.kind(), m.valueType())
	}
	if m.Sum != nil && r.monotonic != *m.Sum.Monotonic {
		add("recorded monotonic %t, declared %t", r.monotonic, *m.Sum.Monotonic)
	}
	if got.Unit != *m.Unit || got.Description != m.Description {
		add("recorded unit %q and description %q, declared %q and %q", got.Unit, got.Description, *m.Unit, m.Description)
	}
	if m.Histogram != nil && m.Histogram.BucketBoundaries != nil {
		for _, b := range r.bounds {
			if !slices.Equal(b, m.Histogram.BucketBoundaries) {
				add("recorded bucket boundaries %v, declared %v", b, m.Histogram.BucketBoundaries)
				break
			}
		}
	}
	for _, set := range r.points {
		var keys []string
		for _, kv := range set.ToSlice() {
			keys = append(keys, string(kv.Key))
			if enum := md.Attributes[string(kv.Key)].Enum; enum != nil && !slices.Contains(enum, kv.Value.String()) {
				add("attribute %s = %q, not one of the declared values %q", kv.Key, kv.Value.String(), enum)
			}
		}
		if !sameSet(keys, m.Attributes) {
			add("a data point recorded with attributes %q, declared %q", keys, m.Attributes)
		}
	}
	return out
}

func shapeOf(data metricdata.Aggregation) (recorded, error) {
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		return recorded{kind: "sum", valueType: "int", monotonic: d.IsMonotonic, points: sets(d.DataPoints, pointAttrs[int64])}, nil
	case metricdata.Sum[float64]:
		return recorded{kind: "sum", valueType: "double", monotonic: d.IsMonotonic, points: sets(d.DataPoints, pointAttrs[float64])}, nil
	case metricdata.Gauge[int64]:
		return recorded{kind: "gauge", valueType: "int", points: sets(d.DataPoints, pointAttrs[int64])}, nil
	case metricdata.Gauge[float64]:
		return recorded{kind: "gauge", valueType: "double", points: sets(d.DataPoints, pointAttrs[float64])}, nil
	case metricdata.Histogram[int64]:
		return histogram("int", d.DataPoints), nil
	case metricdata.Histogram[float64]:
		return histogram("double", d.DataPoints), nil
	}
	return recorded{}, fmt.Errorf("data of type %T: not an instrument a selfmetric table declares", data)
}

func histogram[N int64 | float64](valueType string, dps []metricdata.HistogramDataPoint[N]) recorded {
	r := recorded{kind: "histogram", valueType: valueType}
	for _, dp := range dps {
		r.points = append(r.points, dp.Attributes)
		r.bounds = append(r.bounds, dp.Bounds)
	}
	return r
}

func pointAttrs[N int64 | float64](dp metricdata.DataPoint[N]) attribute.Set { return dp.Attributes }

func sets[P any](dps []P, attrs func(P) attribute.Set) []attribute.Set {
	out := make([]attribute.Set, len(dps))
	for i, dp := range dps {
		out[i] = attrs(dp)
	}
	return out
}
