// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"path/filepath"
	"testing"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// BenchmarkThroughputForms: the paper's configuration with one predicate of
// each newer form added, and a never assertion over it, beside the paper's
// configuration alone and a pass-through, in the same run, over the ADK
// failing run. One op is one trace; ns/span is what to compare.
func BenchmarkThroughputForms(b *testing.B) {
	tmpl := fixtures.Traces(b, "adk-weather/adk-bad-43-0.json")
	reference := filepath.Join(fixtures.Dir(), "adk-weather", "adk-good-42-0.json")
	b.Run("passthrough", func(b *testing.B) { fixtures.PassThrough(b, metadata.Type, tmpl) })
	for _, form := range []struct {
		name string
		pred predicate.Predicate
	}{
		{"paper", predicate.Predicate{}},
		{"tool", predicate.Predicate{Tool: "say_goodbye"}},
		{"budget", predicate.Predicate{Budget: &predicate.Budget{Count: predicate.QuantityToolCalls, Max: 100}}},
		{"repeats", predicate.Predicate{Repeats: &predicate.Repeats{Key: []string{"tool", "args"}, N: 3, Within: 10}}},
		{"no_progress", predicate.Predicate{NoProgress: &predicate.NoProgress{K: 3}}},
		{"flows", predicate.Predicate{Flows: &predicate.Flow{From: "*.result", To: "*.args", Detect: "any"}}},
		{"trajectory", predicate.Predicate{Trajectory: &predicate.Trajectory{Reference: reference, Mode: predicate.ModeStrict, Args: predicate.ArgsExact, At: predicate.AtDeviation}}},
		{"allowlist", predicate.Predicate{Allowlist: &predicate.Allowlist{Tools: []string{"say_hello", "get_*", "transfer_to_agent"}}}},
		{"evaluation", predicate.Predicate{Evaluation: &predicate.Evaluation{Name: "faithfulness", Label: "fail"}}},
	} {
		b.Run(form.name, func(b *testing.B) {
			cfg, err := loadConfig(b, "paper")
			if err != nil {
				b.Fatal(err)
			}
			if form.name != "paper" {
				cfg.Predicates = append(cfg.Predicates, predicate.Named{Name: "added", Predicate: form.pred})
				cfg.Assertions = append(cfg.Assertions, assertion.Config{Name: "added", Never: "added"})
			}
			throughputOnFakeClock(b, tmpl, cfg, nil)
		})
	}
}
