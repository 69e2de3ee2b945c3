// SPDX-License-Identifier: Apache-2.0

// Package probguard is a traces processor that predicts, at every event of
// an LLM agent's trace or conversation, the probability that the run stays
// safe, from a Markov chain learned on earlier traces, and annotates the
// span when it falls below a threshold: a warning before the unsafe state is
// reached.
package probguard

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/agentguard/agentguard/processor/probguard/internal/metadata"
)

// NewFactory returns the probguard processor's factory.
func NewFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, func() component.Config { return createDefaultConfig() },
		processor.WithTraces(createTraces, metadata.TracesStability))
}

// createTraces compiles the predicates' OTTL and loads and solves the
// model; an error here stops the collector from starting.
func createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	c := cfg.(*Config)
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return newProcessor(c, set.ID, set.TelemetrySettings, next, tel)
}
