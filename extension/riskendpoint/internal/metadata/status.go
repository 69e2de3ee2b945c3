// SPDX-License-Identifier: Apache-2.0

// Package metadata holds the riskendpoint extension's type and stability:
// what mdatagen would generate from ../../metadata.yaml. mdatagen is not among
// this module's dependencies (docs/development.md), so they are written by hand, and
// metadata_test.go fails when they and metadata.yaml disagree.
package metadata

import "go.opentelemetry.io/collector/component"

var Type = component.MustNewType("riskendpoint")

const ExtensionStability = component.StabilityLevelDevelopment
