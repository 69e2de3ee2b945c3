// SPDX-License-Identifier: Apache-2.0

package selfmetrictest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentguard/agentguard/internal/selfmetric"
)

// sample is the Go side of testdata/metadata.yaml.
type sample struct {
	items metric.Int64Counter
	held  metric.Int64UpDownCounter
	age   metric.Float64Gauge
	size  metric.Int64Histogram
	spare metric.Float64Counter
}

func (s *sample) component() Component {
	return Component{
		Type: component.MustNewType("sample"), Class: "processor",
		Stability: map[string]component.StabilityLevel{"traces": component.StabilityLevelDevelopment},
		Instruments: []selfmetric.Instrument{
			{Name: "otelcol_processor_sample_items", Description: "Items seen.", Unit: "{items}", Attributes: []string{"name", "outcome"}, Enabled: true, Field: &s.items},
			{Name: "otelcol_processor_sample_held", Description: "Items held.", Unit: "{items}", Enabled: true, Field: &s.held},
			{Name: "otelcol_processor_sample_age", Description: "Age of the oldest item.", Unit: "s", Enabled: true, Field: &s.age},
			{Name: "otelcol_processor_sample_size", Description: "Size of an item.", Unit: "By", Buckets: []float64{1, 10, 100}, Enabled: true, Field: &s.size},
			{Name: "otelcol_processor_sample_spare", Description: "Never exported.", Unit: "1", Field: &s.spare},
		},
		AttributeValues: map[string][]string{"outcome": {"ok", "error"}},
	}
}

func load(t *testing.T) *Metadata {
	t.Helper()
	md, err := Load("testdata/metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func TestAgreementHasNoDiff(t *testing.T) {
	if d := Diff(load(t), new(sample).component()); len(d) != 0 {
		t.Errorf("diff of agreeing sides:\n%s", strings.Join(d, "\n"))
	}
}

// Every field the Go side declares is compared, in both directions.
func TestEachDisagreementIsFound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(c *Component)
		want   string
	}{
		{"type", func(c *Component) { c.Type = component.MustNewType("other") }, `type: metadata.yaml "sample", Go "other"`},
		{"class", func(c *Component) { c.Class = "connector" }, `status.class`},
		{"stability", func(c *Component) { c.Stability["traces"] = component.StabilityLevelAlpha }, `status.stability of traces: metadata.yaml "development", Go "alpha"`},
		{"signal", func(c *Component) { c.Stability["logs"] = component.StabilityLevelDevelopment }, `status.stability of logs: metadata.yaml "", Go "development"`},
		{"description", func(c *Component) { c.Instruments[0].Description = "Items." }, `otelcol_processor_sample_items: description: metadata.yaml "Items seen.", Go "Items."`},
		{"unit", func(c *Component) { c.Instruments[2].Unit = "ms" }, `otelcol_processor_sample_age: unit`},
		{"enabled", func(c *Component) { c.Instruments[4].Enabled = true }, `otelcol_processor_sample_spare: enabled: metadata.yaml false, Go true`},
		{"attributes", func(c *Component) { c.Instruments[0].Attributes = []string{"outcome", "name"} }, `otelcol_processor_sample_items: attributes`},
		{"kind", func(c *Component) { c.Instruments[2].Field = new(metric.Float64Histogram) }, `otelcol_processor_sample_age: kind: metadata.yaml gauge, Go histogram`},
		{"value type", func(c *Component) { c.Instruments[0].Field = new(metric.Float64Counter) }, `otelcol_processor_sample_items: value_type: metadata.yaml int, Go double`},
		{"monotonic", func(c *Component) { c.Instruments[1].Field = new(metric.Int64Counter) }, `otelcol_processor_sample_held: monotonic: metadata.yaml false, Go true`},
		{"buckets", func(c *Component) { c.Instruments[3].Buckets = []float64{1, 10} }, `otelcol_processor_sample_size: bucket boundaries`},
		{"default buckets", func(c *Component) { c.Instruments[3].Buckets = nil }, `otelcol_processor_sample_size: bucket boundaries`},
		{"field type", func(c *Component) { c.Instruments[0].Field = new(int) }, `field of type *int`},
		{"metric only in yaml", func(c *Component) { c.Instruments = c.Instruments[1:] }, `otelcol_processor_sample_items: in metadata.yaml, not in the Go table`},
		{"metric only in Go", func(c *Component) {
			c.Instruments = append(c.Instruments, selfmetric.Instrument{Name: "otelcol_processor_sample_new", Field: new(metric.Int64Counter)})
		}, `otelcol_processor_sample_new: in the Go table, not in metadata.yaml`},
		{"no prefix", func(c *Component) { c.Instruments[0].Name = "processor_sample_items" }, `processor_sample_items: in the Go table, not in metadata.yaml`},
		{"duplicate", func(c *Component) { c.Instruments = append(c.Instruments, c.Instruments[1]) }, `otelcol_processor_sample_held: two instruments`},
		{"attribute only in Go", func(c *Component) { c.Instruments[1].Attributes = []string{"reason"} }, `attribute "reason": recorded by the Go table, not declared`},
		{"attribute unused", func(c *Component) { c.Instruments[0].Attributes = []string{"outcome"} }, `attribute "name": declared in metadata.yaml, no instrument`},
		{"enum value", func(c *Component) { c.AttributeValues["outcome"] = []string{"ok"} }, `attribute "outcome": values ["ok" "error"] in metadata.yaml's enum, ["ok"] in Go`},
		{"enum only in Go", func(c *Component) { c.AttributeValues["name"] = []string{"a"} }, `attribute "name": values [] in metadata.yaml's enum, ["a"] in Go`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := new(sample).component()
			tc.change(&c)
			d := Diff(load(t), c)
			if !slices.ContainsFunc(d, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("diff %q\nhas no %q", d, tc.want)
			}
		})
	}
}

// Load holds metadata.yaml to the schema: unknown keys, missing fields and
// attributes declared or used on one side only are errors.
func TestLoadRefusesWhatMdatagenWould(t *testing.T) {
	good, err := os.ReadFile("testdata/metadata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"misspelt key", "bucket_boundaries:", "bucket_boundary:", "field bucket_boundary not found"},
		{"no enabled", "      enabled: false\n", "", "processor_sample_spare: enabled is required"},
		{"no unit", "      unit: s\n", "", "processor_sample_age: unit is required"},
		{"no monotonic", "{value_type: int, monotonic: false}", "{value_type: int}", "processor_sample_held: sum.monotonic is required"},
		{"two kinds", "gauge: {value_type: double}", "gauge: {value_type: double}\n      sum: {value_type: double, monotonic: true}", "exactly one of sum, gauge and histogram"},
		{"value type", "gauge: {value_type: double}", "gauge: {value_type: float}", `value_type "float"`},
		{"stability", "stability: alpha", "stability: experimental", `stability "experimental"`},
		{"undeclared attribute", "attributes: [name, outcome]", "attributes: [name, outcome, reason]", `attribute "reason" is not declared`},
		{"unused attribute", "attributes: [name, outcome]", "attributes: [outcome]", "attributes.name: no metric is recorded with it"},
		{"attribute type", "type: string\n    enum", "type: text\n    enum", `attributes.outcome: type "text"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(string(good), tc.old) {
				t.Fatalf("fixture has no %q", tc.old)
			}
			path := filepath.Join(t.TempDir(), "metadata.yaml")
			if err := os.WriteFile(path, []byte(strings.Replace(string(good), tc.old, tc.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(path); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// The layout is mdatagen's (contrib's tail_sampling documentation.md has
// these very tables): a sum with its Monotonic column and its attributes, a
// histogram without, an enum as "Str: " and its values each in double
// backquotes, a | in a description escaped.
func TestDocumentationLayout(t *testing.T) {
	doc := Documentation(load(t), "REGENERATE")
	for _, want := range []string{
		"[comment]: <> (Generated from metadata.yaml by REGENERATE. DO NOT EDIT.)\n\n# sample\n\n## Internal Telemetry\n\nThe following telemetry is emitted by this component.\n\n### otelcol_processor_sample_age\n",
		`### otelcol_processor_sample_items

Items seen.

| Unit | Metric Type | Value Type | Monotonic | Stability |
| ---- | ----------- | ---------- | --------- | --------- |
| {items} | Sum | Int | true | Development |

#### Attributes

| Name | Description | Values | Semantic Convention |
| ---- | ----------- | ------ | ------------------- |
| name | Whose it is \| or not. | Any Str | - |
| outcome | How it went. | Str: ` + "``ok``, ``error``" + ` | - |
`,
		`### otelcol_processor_sample_size

Size of an item.

| Unit | Metric Type | Value Type | Stability |
| ---- | ----------- | ---------- | --------- |
| By | Histogram | Int | Development |
`,
		"| {items} | Sum | Int | false | Development |\n",
		"| s | Gauge | Double | Alpha |\n",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("documentation has no\n%s\nin\n%s", want, doc)
		}
	}
	if i, j := strings.Index(doc, "sample_age"), strings.Index(doc, "sample_size"); i > j {
		t.Error("metrics not in name order")
	}
}

func TestCheckDocumentationUpdatesThenAgrees(t *testing.T) {
	md := load(t)
	path := filepath.Join(t.TempDir(), "documentation.md")
	CheckDocumentation(t, md, path, "REGENERATE", true)
	CheckDocumentation(t, md, path, "REGENERATE", false) // fails t if the file written is not the one checked
	got, _ := os.ReadFile(path)
	if string(got) != Documentation(md, "REGENERATE") {
		t.Error("update wrote something else")
	}
}

// collect builds the sample's instruments on a real SDK, lets record use
// them, and returns what the SDK exports.
func collect(t *testing.T, record func(s *sample)) metricdata.ResourceMetrics {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	var s sample
	if err := selfmetric.Build(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("sample"), s.component().Instruments); err != nil {
		t.Fatal(err)
	}
	record(&s)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func TestRecordedAsDeclared(t *testing.T) {
	ctx := context.Background()
	rm := collect(t, func(s *sample) {
		s.items.Add(ctx, 1, metric.WithAttributes(attribute.String("name", "a"), attribute.String("outcome", "ok")))
		s.held.Add(ctx, 2)
		s.age.Record(ctx, 1.5)
		s.size.Record(ctx, 7)
		s.spare.Add(ctx, 1)
	})
	if d := RecordedDiff(load(t), "sample", rm); len(d) != 0 {
		t.Errorf("diff %q", d)
	}
	if len(rm.ScopeMetrics[0].Metrics) != 4 {
		t.Errorf("%d metrics exported: the disabled one must not be", len(rm.ScopeMetrics[0].Metrics))
	}
	if d := RecordedDiff(load(t), "other.scope", rm); len(d) != 0 {
		t.Errorf("another scope's metrics checked: %q", d)
	}
}

func TestRecordedOtherwiseIsFound(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		record func(s *sample)
		want   string
	}{
		{"missing key", func(s *sample) { s.items.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", "ok"))) },
			`otelcol_processor_sample_items: a data point recorded with attributes ["outcome"], declared ["name" "outcome"]`},
		{"extra key", func(s *sample) { s.held.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", "x"))) },
			`otelcol_processor_sample_held: a data point recorded with attributes ["reason"], declared []`},
		{"value outside the enum", func(s *sample) {
			s.items.Add(ctx, 1, metric.WithAttributes(attribute.String("name", "a"), attribute.String("outcome", "fine")))
		}, `attribute outcome = "fine", not one of the declared values ["ok" "error"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := RecordedDiff(load(t), "sample", collect(t, tc.record))
			if !slices.ContainsFunc(d, func(s string) bool { return strings.Contains(s, tc.want) }) {
				t.Errorf("diff %q\nhas no %q", d, tc.want)
			}
		})
	}
}

// Instruments the table does not know, recorded under the scope, are found
// with their shape: another name, another kind, other buckets.
func TestRecordedUndeclaredOrMisshapen(t *testing.T) {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	m := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("sample")
	undeclared, _ := m.Int64Counter("otelcol_processor_sample_other")
	undeclared.Add(ctx, 1)
	gauge, _ := m.Float64Histogram("otelcol_processor_sample_age", metric.WithDescription("Age of the oldest item."), metric.WithUnit("s"))
	gauge.Record(ctx, 1)
	size, _ := m.Int64Histogram("otelcol_processor_sample_size", metric.WithDescription("Size of an item."), metric.WithUnit("By"))
	size.Record(ctx, 1)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	d := strings.Join(RecordedDiff(load(t), "sample", rm), "\n")
	for _, want := range []string{
		"otelcol_processor_sample_other: recorded, not declared",
		"otelcol_processor_sample_age: recorded as a histogram of double values, declared a gauge of double values",
		"otelcol_processor_sample_size: recorded bucket boundaries",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("diff\n%s\nhas no %q", d, want)
		}
	}
}

func TestWarningsNeedTheirBullet(t *testing.T) {
	md := load(t)
	good := "# sample\n\n## Warnings\n\n- [Statefulness](https://github.com/open-telemetry/opentelemetry-collector/blob/main/docs/standard-warnings.md#statefulness): it holds items.\n\n## Configuration\n"
	if d := WarningsDiff(md, good); len(d) != 0 {
		t.Errorf("diff %q", d)
	}
	for _, bad := range []string{
		"# sample\n\n## Configuration\n",
		"# sample\n\n## Warnings\n\nIt holds items.\n",
		"# sample\n\n## Warnings\n\n## Configuration\n\n- [Statefulness](https://github.com/open-telemetry/opentelemetry-collector/blob/main/docs/standard-warnings.md#statefulness): elsewhere.\n",
	} {
		if d := WarningsDiff(md, bad); len(d) != 1 {
			t.Errorf("README\n%s\ndiff %q, want one", bad, d)
		}
	}
}

// include_metrics adds a shared file's metrics under the prefix and its
// attributes; a metric on both sides, or an attribute whose values differ,
// is an error.
func TestIncludeMetrics(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("shared.yaml", `type: shared
attributes:
  result: {description: How it went., type: string, enum: [ok, error]}
telemetry:
  metrics:
    writes: {enabled: true, stability: development, description: Writes., unit: "{writes}", sum: {value_type: int, monotonic: true}, attributes: [result]}
`)
	own := func(metric, enum string) string {
		return `type: sample
status: {class: processor}
attributes:
  result: {description: Mine., type: string, enum: ` + enum + `}
include_metrics: {from: shared.yaml, prefix: processor_sample_}
telemetry:
  metrics:
    ` + metric + `: {enabled: true, stability: development, description: Own., unit: "1", gauge: {value_type: int}, attributes: [result]}
`
	}
	md, err := Load(write("ok.yaml", own("processor_sample_own", "[ok, error]")))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := md.Telemetry.Metrics["processor_sample_writes"]; !ok || md.Attributes["result"].Description != "Mine." {
		t.Errorf("included: %v, attribute %+v", md.Telemetry.Metrics, md.Attributes["result"])
	}
	for path, want := range map[string]string{
		write("clash.yaml", own("processor_sample_writes", "[ok, error]")): "metric processor_sample_writes is declared here and in shared",
		write("enum.yaml", own("processor_sample_own", "[ok]")):            "attribute result",
	} {
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", filepath.Base(path), err, want)
		}
	}
}
