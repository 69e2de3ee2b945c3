// SPDX-License-Identifier: Apache-2.0

// Package temporalcheck is a traces processor that checks temporal-expression
// assertions over the events of each trace or conversation of LLM agents, and
// writes every violation on the span where it happened.
package temporalcheck

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/processor"

	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// NewFactory returns the temporalcheck processor's factory.
func NewFactory() processor.Factory {
	return processor.NewFactory(metadata.Type, func() component.Config { return createDefaultConfig() },
		processor.WithTraces(createTraces, metadata.TracesStability))
}

// createTraces compiles the predicates' OTTL; an error here stops the
// collector from starting.
func createTraces(_ context.Context, set processor.Settings, cfg component.Config, next consumer.Traces) (processor.Traces, error) {
	c := cfg.(*Config)
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return newProcessor(c, set.ID, set.TelemetrySettings, next, tel)
}
