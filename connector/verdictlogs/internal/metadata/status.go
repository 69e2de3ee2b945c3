// SPDX-License-Identifier: Apache-2.0

// Package metadata holds the verdictlogs connector's type, stability and
// self-metrics: what mdatagen would generate from ../../metadata.yaml. mdatagen
// is not among this module's dependencies (docs/development.md), so they are written by hand,
// the self-metrics as one table (telemetry.go), and metadata_test.go fails
// when they and metadata.yaml (or documentation.md) disagree.
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("verdictlogs")
	ScopeName = "github.com/agentguard/agentguard/connector/verdictlogs"
)

const (
	TracesToLogsStability    = component.StabilityLevelDevelopment
	TracesToMetricsStability = component.StabilityLevelDevelopment
)
