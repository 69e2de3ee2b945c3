// SPDX-License-Identifier: Apache-2.0

package selfmetric

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Every kind of field becomes its instrument, with the table's name,
// description, unit and buckets, as the SDK exports it.
func TestBuildEveryKind(t *testing.T) {
	var f struct {
		ic  metric.Int64Counter
		fc  metric.Float64Counter
		iud metric.Int64UpDownCounter
		fud metric.Float64UpDownCounter
		ig  metric.Int64Gauge
		fg  metric.Float64Gauge
		ih  metric.Int64Histogram
		fh  metric.Float64Histogram
	}
	table := []Instrument{
		{Name: "ic", Field: &f.ic}, {Name: "fc", Field: &f.fc},
		{Name: "iud", Field: &f.iud}, {Name: "fud", Field: &f.fud},
		{Name: "ig", Field: &f.ig}, {Name: "fg", Field: &f.fg},
		{Name: "ih", Field: &f.ih, Buckets: []float64{1, 2}}, {Name: "fh", Field: &f.fh, Buckets: []float64{0.5}},
	}
	for i := range table {
		table[i].Enabled, table[i].Description, table[i].Unit = true, "about "+table[i].Name, "{"+table[i].Name+"}"
	}
	reader := sdkmetric.NewManualReader()
	if err := Build(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("t"), table); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f.ic.Add(ctx, 1)
	f.fc.Add(ctx, 1)
	f.iud.Add(ctx, -1)
	f.fud.Add(ctx, -1)
	f.ig.Record(ctx, 1)
	f.fg.Record(ctx, 1)
	f.ih.Record(ctx, 1)
	f.fh.Record(ctx, 1)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]metricdata.Metrics{}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		got[m.Name] = m
	}
	want := map[string]string{
		"ic": "metricdata.Sum[int64]", "fc": "metricdata.Sum[float64]", "iud": "metricdata.Sum[int64]", "fud": "metricdata.Sum[float64]",
		"ig": "metricdata.Gauge[int64]", "fg": "metricdata.Gauge[float64]", "ih": "metricdata.Histogram[int64]", "fh": "metricdata.Histogram[float64]",
	}
	for _, in := range table {
		m, ok := got[in.Name]
		if !ok {
			t.Errorf("%s not exported", in.Name)
			continue
		}
		if typ := typeName(m.Data); typ != want[in.Name] || m.Description != in.Description || m.Unit != in.Unit {
			t.Errorf("%s: %s %q %q", in.Name, typ, m.Description, m.Unit)
		}
	}
	if b := got["ih"].Data.(metricdata.Histogram[int64]).DataPoints[0].Bounds; !slices.Equal(b, []float64{1, 2}) {
		t.Errorf("int64 histogram bounds %v", b)
	}
	if b := got["fh"].Data.(metricdata.Histogram[float64]).DataPoints[0].Bounds; !slices.Equal(b, []float64{0.5}) {
		t.Errorf("float64 histogram bounds %v", b)
	}
	if s := got["iud"].Data.(metricdata.Sum[int64]); s.IsMonotonic {
		t.Error("an up-down counter exported as monotonic")
	}
}

func typeName(data metricdata.Aggregation) string {
	switch data.(type) {
	case metricdata.Sum[int64]:
		return "metricdata.Sum[int64]"
	case metricdata.Sum[float64]:
		return "metricdata.Sum[float64]"
	case metricdata.Gauge[int64]:
		return "metricdata.Gauge[int64]"
	case metricdata.Gauge[float64]:
		return "metricdata.Gauge[float64]"
	case metricdata.Histogram[int64]:
		return "metricdata.Histogram[int64]"
	case metricdata.Histogram[float64]:
		return "metricdata.Histogram[float64]"
	}
	return "?"
}

// A disabled instrument is usable and exports nothing.
func TestDisabledExportsNothing(t *testing.T) {
	var c metric.Int64Counter
	reader := sdkmetric.NewManualReader()
	if err := Build(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("t"), []Instrument{{Name: "off", Field: &c}}); err != nil {
		t.Fatal(err)
	}
	c.Add(context.Background(), 1)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) != 0 {
		t.Errorf("exported %v", rm.ScopeMetrics)
	}
}

// A field that is no instrument, or buckets on what is no histogram, are
// errors that name the instrument; the other instruments are still built.
func TestBuildErrorsNameTheInstrument(t *testing.T) {
	var n int
	var c metric.Int64Counter
	var ok metric.Int64Counter
	err := Build(sdkmetric.NewMeterProvider().Meter("t"), []Instrument{
		{Name: "not_an_instrument", Field: &n, Enabled: true},
		{Name: "counter_with_buckets", Field: &c, Buckets: []float64{1}, Enabled: true},
		{Name: "fine", Field: &ok, Enabled: true},
	})
	for _, want := range []string{"instrument not_an_instrument: field of type *int", "instrument counter_with_buckets: buckets [1] on a sum"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	if ok == nil {
		t.Error("the valid instrument was not built")
	}
}
