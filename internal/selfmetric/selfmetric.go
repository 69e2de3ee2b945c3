// SPDX-License-Identifier: Apache-2.0

// Package selfmetric builds a component's self-metrics from one table: each
// row names an instrument, describes it, lists the attribute keys it is
// recorded with, and points at the field of the component's telemetry
// builder that holds it. The field's Go type is the instrument's kind, so
// the table cannot say one kind while the code records another.
//
// mdatagen generates this code from metadata.yaml elsewhere; it is not among
// this module's dependencies (docs/development.md), so the table is written by hand and a test
// (package selfmetrictest) holds it and metadata.yaml to each other.
package selfmetric

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// Instrument is one self-metric.
type Instrument struct {
	// Name is the full name, otelcol_ and metadata.yaml's key.
	Name        string
	Description string
	Unit        string
	// Attributes are the keys every data point is recorded with.
	Attributes []string
	// Buckets are a histogram's explicit bucket boundaries; nil leaves the
	// SDK's defaults.
	Buckets []float64
	// Enabled false creates the instrument on a no-op meter: the code may
	// record, nothing is exported.
	Enabled bool
	// Field points at the builder's field the instrument is stored in: a
	// *metric.Int64Counter, *metric.Float64Histogram, ... (see Shape).
	Field any
}

// Kind is what metadata.yaml calls the metric's type.
type Kind string

// The kinds of metric.
const (
	Sum       Kind = "sum"
	Gauge     Kind = "gauge"
	Histogram Kind = "histogram"
)

// Shape is what an instrument's Go type says about its data.
type Shape struct {
	Kind Kind
	// ValueType is int or double, as metadata.yaml writes it.
	ValueType string
	// Monotonic is meaningful for a sum only.
	Monotonic bool
}

// Shape reads the instrument's shape from its field's type.
func (in Instrument) Shape() (Shape, error) {
	switch in.Field.(type) {
	case *metric.Int64Counter:
		return Shape{Sum, "int", true}, nil
	case *metric.Float64Counter:
		return Shape{Sum, "double", true}, nil
	case *metric.Int64UpDownCounter:
		return Shape{Sum, "int", false}, nil
	case *metric.Float64UpDownCounter:
		return Shape{Sum, "double", false}, nil
	case *metric.Int64Gauge:
		return Shape{Gauge, "int", false}, nil
	case *metric.Float64Gauge:
		return Shape{Gauge, "double", false}, nil
	case *metric.Int64Histogram:
		return Shape{Histogram, "int", false}, nil
	case *metric.Float64Histogram:
		return Shape{Histogram, "double", false}, nil
	}
	return Shape{}, fmt.Errorf("instrument %s: field of type %T: want a pointer to a synchronous instrument of go.opentelemetry.io/otel/metric", in.Name, in.Field)
}

// Build creates every instrument of the table on m (a disabled one on a no-op
// meter) and stores it in its field. One instrument's error does not stop the
// others: the errors of all are joined.
func Build(m metric.Meter, table []Instrument) error {
	var errs error
	for _, in := range table {
		errs = errors.Join(errs, in.build(m))
	}
	return errs
}

func (in Instrument) build(m metric.Meter) error {
	shape, err := in.Shape()
	if err != nil {
		return err
	}
	if in.Buckets != nil && shape.Kind != Histogram {
		return fmt.Errorf("instrument %s: buckets %v on a %s: only a histogram has buckets", in.Name, in.Buckets, shape.Kind)
	}
	if !in.Enabled {
		m = noop.Meter{}
	}
	desc, unit := metric.WithDescription(in.Description), metric.WithUnit(in.Unit)
	int64Hist, float64Hist := []metric.Int64HistogramOption{desc, unit}, []metric.Float64HistogramOption{desc, unit}
	if in.Buckets != nil {
		b := metric.WithExplicitBucketBoundaries(in.Buckets...)
		int64Hist, float64Hist = append(int64Hist, b), append(float64Hist, b)
	}
	switch f := in.Field.(type) {
	case *metric.Int64Counter:
		*f, err = m.Int64Counter(in.Name, desc, unit)
	case *metric.Float64Counter:
		*f, err = m.Float64Counter(in.Name, desc, unit)
	case *metric.Int64UpDownCounter:
		*f, err = m.Int64UpDownCounter(in.Name, desc, unit)
	case *metric.Float64UpDownCounter:
		*f, err = m.Float64UpDownCounter(in.Name, desc, unit)
	case *metric.Int64Gauge:
		*f, err = m.Int64Gauge(in.Name, desc, unit)
	case *metric.Float64Gauge:
		*f, err = m.Float64Gauge(in.Name, desc, unit)
	case *metric.Int64Histogram:
		*f, err = m.Int64Histogram(in.Name, int64Hist...)
	case *metric.Float64Histogram:
		*f, err = m.Float64Histogram(in.Name, float64Hist...)
	}
	if err != nil {
		return fmt.Errorf("instrument %s: %w", in.Name, err)
	}
	return nil
}
