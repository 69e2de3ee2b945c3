// SPDX-License-Identifier: Apache-2.0

// Package selfmetrictest holds a component's hand-written telemetry (its
// selfmetric table, type and stability), its metadata.yaml, its
// documentation.md and the metrics it actually records to each other, for the
// component's tests. mdatagen would generate the code and the documentation
// from metadata.yaml; without it, these checks keep the four in step.
package selfmetrictest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"
)

// Metadata is the part of mdatagen's metadata.yaml schema agentguard's
// components use. Load refuses any other key, so that a misspelt one (say
// bucket_boundary) is an error rather than a silent default.
type Metadata struct {
	Type       string               `yaml:"type"`
	Status     Status               `yaml:"status"`
	Attributes map[string]Attribute `yaml:"attributes"`
	Telemetry  struct {
		Metrics map[string]Metric `yaml:"metrics"`
	} `yaml:"telemetry"`
	// IncludeMetrics names a file of metrics shared by several components
	// (the holding stage's): Load adds its metrics, each key prefixed, and
	// its attributes. mdatagen has no such key; agentguard's components
	// declare a shared metric once this way.
	IncludeMetrics *Include `yaml:"include_metrics"`
}

// Include is a shared metadata file, relative to the including one, and the
// prefix of its metrics' keys there.
type Include struct {
	From   string `yaml:"from"`
	Prefix string `yaml:"prefix"`
}

// Status is metadata.yaml's status section.
type Status struct {
	Class string `yaml:"class"`
	// Stability lists the signals at each level, as {development: [traces]}.
	Stability map[string][]string `yaml:"stability"`
	// Warnings are names of the collector's standard warnings
	// (docs/standard-warnings.md), each explained in the README.
	Warnings   []string `yaml:"warnings"`
	Codeowners struct {
		Active []string `yaml:"active"`
	} `yaml:"codeowners"`
}

// Attribute is one of the attributes metrics are recorded with.
type Attribute struct {
	Description string `yaml:"description"`
	// Type is string, int, double or bool.
	Type string `yaml:"type"`
	// Enum, when set, is every value the attribute takes.
	Enum []string `yaml:"enum"`
}

// Metric is one self-metric; exactly one of Sum, Gauge and Histogram is set.
type Metric struct {
	Enabled     *bool      `yaml:"enabled"`
	Stability   string     `yaml:"stability"`
	Description string     `yaml:"description"`
	Unit        *string    `yaml:"unit"`
	Sum         *Sum       `yaml:"sum"`
	Gauge       *Gauge     `yaml:"gauge"`
	Histogram   *Histogram `yaml:"histogram"`
	Attributes  []string   `yaml:"attributes"`
}

// Sum is a counter (monotonic) or an up-down counter.
type Sum struct {
	ValueType string `yaml:"value_type"`
	Monotonic *bool  `yaml:"monotonic"`
}

// Gauge is a synchronous gauge.
type Gauge struct {
	ValueType string `yaml:"value_type"`
}

// Histogram has explicit bucket boundaries or the SDK's.
type Histogram struct {
	ValueType        string    `yaml:"value_type"`
	BucketBoundaries []float64 `yaml:"bucket_boundaries"`
}

// Load reads and validates a metadata.yaml.
func Load(path string) (*Metadata, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var md Metadata
	if err := dec.Decode(&md); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if inc := md.IncludeMetrics; inc != nil {
		part, err := Load(filepath.Join(filepath.Dir(path), inc.From))
		if err != nil {
			return nil, fmt.Errorf("%s: include_metrics: %w", path, err)
		}
		if err := md.include(part, inc.Prefix); err != nil {
			return nil, fmt.Errorf("%s: include_metrics: %w", path, err)
		}
	}
	if err := md.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &md, nil
}

// include adds part's metrics under prefix and its attributes. An attribute
// both declare must take the same values; md's description stands.
func (md *Metadata) include(part *Metadata, prefix string) error {
	if md.Telemetry.Metrics == nil {
		md.Telemetry.Metrics = map[string]Metric{}
	}
	for key, m := range part.Telemetry.Metrics {
		if _, clash := md.Telemetry.Metrics[prefix+key]; clash {
			return fmt.Errorf("metric %s is declared here and in %s", prefix+key, part.Type)
		}
		md.Telemetry.Metrics[prefix+key] = m
	}
	if md.Attributes == nil {
		md.Attributes = map[string]Attribute{}
	}
	for name, a := range part.Attributes {
		own, ok := md.Attributes[name]
		if !ok {
			md.Attributes[name] = a
			continue
		}
		if own.Type != a.Type || !slices.Equal(own.Enum, a.Enum) {
			return fmt.Errorf("attribute %s: %s %q here, %s %q in %s", name, own.Type, own.Enum, a.Type, a.Enum, part.Type)
		}
	}
	return nil
}

// The values mdatagen accepts where agentguard's components use them.
var (
	valueTypes     = []string{"int", "double"}
	attributeTypes = []string{"string", "int", "double", "bool"}
	stabilities    = []string{"development", "alpha", "beta", "stable", "deprecated"}
)

// validate applies the schema's rules that decoding does not: every metric
// is complete and of one kind, every attribute it names is declared, every
// declared attribute is used.
func (md *Metadata) validate() error {
	var errs []error
	if md.Type == "" {
		errs = append(errs, errors.New("type is required"))
	}
	used := map[string]bool{}
	for _, name := range sortedKeys(md.Telemetry.Metrics) {
		m := md.Telemetry.Metrics[name]
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("telemetry.metrics.%s: "+format, append([]any{name}, args...)...))
		}
		if m.Enabled == nil {
			bad("enabled is required")
		}
		if m.Description == "" {
			bad("description is required")
		}
		if m.Unit == nil {
			bad("unit is required (\"1\" for a dimensionless value)")
		}
		if !slices.Contains(stabilities, m.Stability) {
			bad("stability %q: valid values are %q", m.Stability, stabilities)
		}
		kinds := 0
		if m.Sum != nil {
			kinds++
			if m.Sum.Monotonic == nil {
				bad("sum.monotonic is required")
			}
		}
		if m.Gauge != nil {
			kinds++
		}
		if m.Histogram != nil {
			kinds++
		}
		if kinds != 1 {
			bad("exactly one of sum, gauge and histogram is required, found %d", kinds)
			continue
		}
		if vt := m.valueType(); !slices.Contains(valueTypes, vt) {
			bad("value_type %q: valid values are %q", vt, valueTypes)
		}
		for _, a := range m.Attributes {
			used[a] = true
			if _, ok := md.Attributes[a]; !ok {
				bad("attribute %q is not declared under attributes", a)
			}
		}
		if len(slices.Compact(slices.Sorted(slices.Values(m.Attributes)))) != len(m.Attributes) {
			bad("attributes %q name one twice", m.Attributes)
		}
	}
	for _, name := range sortedKeys(md.Attributes) {
		a := md.Attributes[name]
		if !used[name] {
			errs = append(errs, fmt.Errorf("attributes.%s: no metric is recorded with it", name))
		}
		if a.Description == "" {
			errs = append(errs, fmt.Errorf("attributes.%s: description is required", name))
		}
		if !slices.Contains(attributeTypes, a.Type) {
			errs = append(errs, fmt.Errorf("attributes.%s: type %q: valid values are %q", name, a.Type, attributeTypes))
		}
	}
	return errors.Join(errs...)
}

// kind is the metric's kind, as selfmetric names it.
func (m Metric) kind() string {
	switch {
	case m.Sum != nil:
		return "sum"
	case m.Gauge != nil:
		return "gauge"
	}
	return "histogram"
}

func (m Metric) valueType() string {
	switch {
	case m.Sum != nil:
		return m.Sum.ValueType
	case m.Gauge != nil:
		return m.Gauge.ValueType
	}
	return m.Histogram.ValueType
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
