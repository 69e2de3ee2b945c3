// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentguard/agentguard/internal/stage"
)

// check's counts (events, how often each predicate held, how often each
// assertion was triggered) are the processor's own, read from the
// self-metrics it records as it judges: the very evaluation whose verdicts
// check prints. A second evaluation of its own could disagree with them: the
// processor writes its verdicts on the spans it passes on, so the same
// predicates read again over those spans see other attributes (ADK for
// TypeScript leaves a failed call's span without any, and a verdict gives it
// some).

// processorCounts are what the processor counted.
type processorCounts struct {
	events    int
	held      map[string]int // by predicate
	triggered map[string]int // by assertion
}

// The self-metrics read, by the end of their name (the collector's
// otelcol_processor_temporalcheck_ comes before), and the key of the
// assertion attribute (temporalcheck's metadata.AttrAssertion, internal to
// that package).
const (
	metricPredicateHeld      = "_predicate_held"
	metricAssertionTriggered = "_assertion_triggered"
	metricEventsPerGroup     = "_events_per_group"
	attrAssertion            = "assertion"
)

// countingMeter is a meter provider whose recordings collect reads.
func countingMeter() (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), reader
}

// collect reads the counts from what the processor recorded.
func collect(reader *sdkmetric.ManualReader) (processorCounts, error) {
	pc := processorCounts{held: map[string]int{}, triggered: map[string]int{}}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		return pc, fmt.Errorf("reading the processor's counts: %w", err)
	}
	sums := func(data metricdata.Aggregation, key attribute.Key, into map[string]int) {
		if s, ok := data.(metricdata.Sum[int64]); ok {
			for _, dp := range s.DataPoints {
				v, _ := dp.Attributes.Value(key)
				into[v.AsString()] += int(dp.Value)
			}
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch {
			case strings.HasSuffix(m.Name, metricPredicateHeld):
				sums(m.Data, stage.AttrPredicate, pc.held)
			case strings.HasSuffix(m.Name, metricAssertionTriggered):
				sums(m.Data, attrAssertion, pc.triggered)
			case strings.HasSuffix(m.Name, metricEventsPerGroup):
				// Recorded once per chunk of a group's events judged: the
				// sum is every event.
				if h, ok := m.Data.(metricdata.Histogram[int64]); ok {
					for _, dp := range h.DataPoints {
						pc.events += int(dp.Sum)
					}
				}
			}
		}
	}
	return pc, nil
}
