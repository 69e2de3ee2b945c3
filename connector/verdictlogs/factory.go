// SPDX-License-Identifier: Apache-2.0

// Package verdictlogs is a traces-to-logs and traces-to-metrics connector:
// every verdict an agentguard processor wrote on a span (a
// gen_ai.evaluation.result span event) becomes a log record, so that verdicts
// reach any logs backend, and is counted in low-cardinality metrics with an
// exemplar linking to the span, so that a metrics backend can alert on them.
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
		connector.WithTracesToLogs(createTracesToLogs, metadata.TracesToLogsStability),
		connector.WithTracesToMetrics(createTracesToMetrics, metadata.TracesToMetricsStability))
}

func createTracesToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Traces, error) {
	tel, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return newConnector(cfg.(*Config), next, tel, set.Logger), nil
}

// createTracesToMetrics makes the metrics side: the same verdicts counted
// (agentguard.verdicts, agentguard.p_safe). The collector makes one
// connector for each pipeline pair, so it holds only the counts.
func createTracesToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Traces, error) {
	return newVerdictMetrics(cfg.(*Config), next, set.Logger), nil
}
