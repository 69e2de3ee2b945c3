// SPDX-License-Identifier: Apache-2.0

package verdictlogs

import (
	"fmt"

	"go.opentelemetry.io/collector/component"
	"slices"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

// Config of the verdictlogs connector.
type Config struct {
	// Checks lists the agentguard checks whose gen_ai.evaluation.result
	// events become log records. Default: temporalcheck and probguard.
	Checks []string `mapstructure:"checks"`
	// Passes also turns passing verdicts (INFO) into records. Default true;
	// false keeps only violations and risks (WARN).
	Passes bool `mapstructure:"passes"`
	// Decisions names a riskendpoint extension: every decision it answers
	// becomes a record too (an audit trail of what an agent asked, what it
	// was answered and why). Unset: none.
	Decisions *component.ID `mapstructure:"decisions"`
}

func createDefaultConfig() *Config {
	return &Config{Checks: []string{verdictattr.CheckTemporal, verdictattr.CheckProb}, Passes: true}
}

// Validate checks every configured check name.
func (c *Config) Validate() error {
	if len(c.Checks) == 0 {
		return fmt.Errorf("checks: at least one check is required: valid values are %q and %q", verdictattr.CheckTemporal, verdictattr.CheckProb)
	}
	for _, ch := range c.Checks {
		if ch != verdictattr.CheckTemporal && ch != verdictattr.CheckProb {
			return fmt.Errorf("checks: unknown check %q: valid values are %q and %q", ch, verdictattr.CheckTemporal, verdictattr.CheckProb)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(c.Checks)))) != len(c.Checks) {
		return fmt.Errorf("checks: %v names a check twice", c.Checks)
	}
	return nil
}
