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
	// Metrics configures the traces-to-metrics side: the verdicts counted.
	Metrics MetricsConfig `mapstructure:"metrics"`
}

// MetricsConfig bounds the verdict metrics' state.
type MetricsConfig struct {
	// MaxSeries bounds the series kept (their running totals) of each
	// metric; the verdicts of a new series past it are counted in one
	// overflow series. Default 10000: 10 assertions of 20 services with 5
	// labels and 3 history marks, with room to spare.
	MaxSeries int `mapstructure:"max_series"`
}

// defaultMaxSeries is metrics.max_series's default.
const defaultMaxSeries = 10000

func createDefaultConfig() *Config {
	return &Config{Checks: []string{verdictattr.CheckTemporal, verdictattr.CheckProb}, Passes: true,
		Metrics: MetricsConfig{MaxSeries: defaultMaxSeries}}
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
	if c.Metrics.MaxSeries < 1 {
		return fmt.Errorf("metrics.max_series: %d: at least 1 series is required", c.Metrics.MaxSeries)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(c.Checks)))) != len(c.Checks) {
		return fmt.Errorf("checks: %v names a check twice", c.Checks)
	}
	return nil
}
