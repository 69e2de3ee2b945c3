// SPDX-License-Identifier: Apache-2.0

package selfmetrictest

import (
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"

	"github.com/agentguard/agentguard/internal/selfmetric"
)

// Component is what a component's Go code declares about itself.
type Component struct {
	Type  component.Type
	Class string // processor, connector, ...
	// Stability is each signal's level, as {"traces": TracesStability}.
	Stability   map[string]component.StabilityLevel
	Instruments []selfmetric.Instrument
	// AttributeValues are the closed sets of values, by attribute key: the
	// constants the code records, which metadata.yaml lists as enums.
	AttributeValues map[string][]string
}

// Diff lists every disagreement between the Go declarations and
// metadata.yaml, looked at from both sides: a metric, attribute or value on
// one side only, and every field of a metric on both.
func Diff(md *Metadata, c Component) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	if md.Type != c.Type.String() {
		add("type: metadata.yaml %q, Go %q", md.Type, c.Type)
	}
	if md.Status.Class != c.Class {
		add("status.class: metadata.yaml %q, Go %q", md.Status.Class, c.Class)
	}
	yamlStability := map[string]string{}
	for level, signals := range md.Status.Stability {
		for _, s := range signals {
			yamlStability[s] = level
		}
	}
	for _, signal := range union(sortedKeys(yamlStability), sortedKeys(c.Stability)) {
		goLevel := ""
		if l, ok := c.Stability[signal]; ok {
			goLevel = strings.ToLower(l.String())
		}
		if yamlStability[signal] != goLevel {
			add("status.stability of %s: metadata.yaml %q, Go %q", signal, yamlStability[signal], goLevel)
		}
	}

	byName := map[string]selfmetric.Instrument{}
	used := map[string]bool{}
	for _, in := range c.Instruments {
		if _, dup := byName[in.Name]; dup {
			add("%s: two instruments of that name in the Go table", in.Name)
		}
		byName[in.Name] = in
		for _, a := range in.Attributes {
			used[a] = true
		}
	}
	for _, key := range sortedKeys(md.Telemetry.Metrics) {
		if _, ok := byName["otelcol_"+key]; !ok {
			add("otelcol_%s: in metadata.yaml, not in the Go table", key)
		}
	}
	for _, name := range sortedKeys(byName) {
		in := byName[name]
		m, ok := md.Telemetry.Metrics[strings.TrimPrefix(name, "otelcol_")]
		if !ok || !strings.HasPrefix(name, "otelcol_") {
			add("%s: in the Go table, not in metadata.yaml (whose keys are the names without otelcol_)", name)
			continue
		}
		out = append(out, diffMetric(name, m, in)...)
	}

	for _, a := range union(sortedKeys(md.Attributes), sortedKeys(used)) {
		if _, ok := md.Attributes[a]; !ok {
			add("attribute %q: recorded by the Go table, not declared in metadata.yaml", a)
		} else if !used[a] {
			add("attribute %q: declared in metadata.yaml, no instrument of the Go table is recorded with it", a)
		}
	}
	for _, a := range union(sortedKeys(md.Attributes), sortedKeys(c.AttributeValues)) {
		want, got := md.Attributes[a].Enum, c.AttributeValues[a]
		if !sameSet(want, got) {
			add("attribute %q: values %q in metadata.yaml's enum, %q in Go", a, want, got)
		}
	}
	return out
}

func diffMetric(name string, m Metric, in selfmetric.Instrument) []string {
	var out []string
	differ := func(field string, yamlValue, goValue any) {
		out = append(out, fmt.Sprintf("%s: %s: metadata.yaml %v, Go %v", name, field, yamlValue, goValue))
	}
	if m.Description != in.Description {
		differ("description", fmt.Sprintf("%q", m.Description), fmt.Sprintf("%q", in.Description))
	}
	if *m.Unit != in.Unit {
		differ("unit", fmt.Sprintf("%q", *m.Unit), fmt.Sprintf("%q", in.Unit))
	}
	if *m.Enabled != in.Enabled {
		differ("enabled", *m.Enabled, in.Enabled)
	}
	if !slices.Equal(m.Attributes, in.Attributes) {
		differ("attributes", m.Attributes, in.Attributes)
	}
	shape, err := in.Shape()
	if err != nil {
		return append(out, err.Error())
	}
	if string(shape.Kind) != m.kind() {
		differ("kind", m.kind(), shape.Kind)
		return out
	}
	if m.valueType() != shape.ValueType {
		differ("value_type", m.valueType(), shape.ValueType)
	}
	if m.Sum != nil && *m.Sum.Monotonic != shape.Monotonic {
		differ("monotonic", *m.Sum.Monotonic, shape.Monotonic)
	}
	var buckets []float64
	if m.Histogram != nil {
		buckets = m.Histogram.BucketBoundaries
	}
	if !slices.Equal(buckets, in.Buckets) {
		differ("bucket boundaries", buckets, in.Buckets)
	}
	return out
}

// union is the sorted set of both lists' strings.
func union(a, b []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(a), b...))))
}

func sameSet(a, b []string) bool {
	return slices.Equal(union(a, nil), union(b, nil))
}
