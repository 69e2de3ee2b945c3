// Package metadata holds the probguard processor's type, stability and
// self-metrics, in the shape mdatagen generates from ../../metadata.yaml
// (written by hand: mdatagen is not served by this machine's module proxy).
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("probguard")
	ScopeName = "github.com/agentguard/agentguard/processor/probguard"
)

const TracesStability = component.StabilityLevelDevelopment
