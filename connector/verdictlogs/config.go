package verdictlogs

import (
	"fmt"
	"slices"
)

// The agentguard checks whose verdicts the connector turns into logs.
const (
	CheckTemporal = "temporalcheck"
	CheckProb     = "probguard"
)

// Config of the verdictlogs connector.
type Config struct {
	// Checks lists the agentguard checks whose gen_ai.evaluation.result
	// events become log records. Default: temporalcheck and probguard.
	Checks []string `mapstructure:"checks"`
	// Passes also turns passing verdicts (INFO) into records. Default true;
	// false keeps only violations and risks (WARN).
	Passes bool `mapstructure:"passes"`
}

func createDefaultConfig() *Config {
	return &Config{Checks: []string{CheckTemporal, CheckProb}, Passes: true}
}

// Validate checks every configured check name.
func (c *Config) Validate() error {
	if len(c.Checks) == 0 {
		return fmt.Errorf("checks: at least one check is required: valid values are %q and %q", CheckTemporal, CheckProb)
	}
	for _, ch := range c.Checks {
		if ch != CheckTemporal && ch != CheckProb {
			return fmt.Errorf("checks: unknown check %q: valid values are %q and %q", ch, CheckTemporal, CheckProb)
		}
	}
	if len(slices.Compact(slices.Sorted(slices.Values(c.Checks)))) != len(c.Checks) {
		return fmt.Errorf("checks: %v names a check twice", c.Checks)
	}
	return nil
}
