// Package metadata holds the temporalcheck processor's type, stability and
// self-metrics, in the shape mdatagen generates from ../../metadata.yaml
// (written by hand: mdatagen is not served by this machine's module proxy).
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("temporalcheck")
	ScopeName = "github.com/agentguard/agentguard/processor/temporalcheck"
)

const TracesStability = component.StabilityLevelDevelopment
