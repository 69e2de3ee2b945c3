// SPDX-License-Identifier: Apache-2.0

// Package riskendpoint is a collector extension that serves, over HTTP,
// the latest probguard decision of each open group as JSON, so that an
// agent can ask before it acts: GET /v1/groups/{group}.
package riskendpoint

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"

	"github.com/agentguard/agentguard/extension/riskendpoint/internal/metadata"
)

// NewFactory returns the riskendpoint extension's factory.
func NewFactory() extension.Factory {
	return extension.NewFactory(metadata.Type, func() component.Config { return createDefaultConfig() },
		func(_ context.Context, set extension.Settings, cfg component.Config) (extension.Extension, error) {
			return newEndpoint(cfg.(*Config), set.TelemetrySettings), nil
		}, metadata.ExtensionStability)
}
