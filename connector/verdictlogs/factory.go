// SPDX-License-Identifier: Apache-2.0

// Package verdictlogs is a traces-to-logs connector: every verdict an
// agentguard processor wrote on a span (a gen_ai.evaluation.result span event)
// becomes a log record, so that verdicts reach any logs backend.
package verdictlogs

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/agentguard/agentguard/connector/verdictlogs/internal/metadata"
)

// NewFactory returns the verdictlogs connector's factory.
func NewFactory() connector.Factory {
	return connector.NewFactory(metadata.Type, func() component.Config { return createDefaultConfig() },
		connector.WithTracesToLogs(createTracesToLogs, metadata.TracesToLogsStability))
}

func createTracesToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Traces, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return newConnector(cfg.(*Config), next, tel, set.Logger), nil
}
