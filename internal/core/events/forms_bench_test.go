// SPDX-License-Identifier: Apache-2.0

package events

import (
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"

	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// BenchmarkExtractForms: a conversation's events extracted with the
// paper's predicates, then with one predicate of each newer form added, in
// the same run, over ADK for TypeScript's correct run (model calls with
// token usage, tool calls with arguments and results). One op is the whole
// conversation; ns/span is what to compare.
func BenchmarkExtractForms(b *testing.B) {
	td := fixtures.Traces(b, "adk-js/strong-run-01.json")
	spans := td.SpanCount()
	reference := filepath.Join(fixtures.Dir(), "adk-js", "strong-run-01.json")
	paper := []predicate.Named{
		{Name: "xferToGreeting", Predicate: predicate.Predicate{TransferTo: "greeting_agent"}},
		{Name: "xferToWeather", Predicate: predicate.Predicate{TransferTo: "weather_agent_v2"}},
		{Name: "sayHello", Predicate: predicate.Predicate{Tool: "say_hello"}},
		{Name: "getWeather", Predicate: predicate.Predicate{Tool: "get_weather"}},
	}
	for _, form := range []struct {
		name string
		pred predicate.Predicate
	}{
		{"paper", predicate.Predicate{}},
		{"tool", predicate.Predicate{Tool: "say_goodbye"}},
		{"budget_tokens", predicate.Predicate{Budget: &predicate.Budget{Sum: predicate.QuantityTokens, Max: 1e9}}},
		{"budget_per_tool", predicate.Predicate{Budget: &predicate.Budget{Count: predicate.QuantityToolCalls, Max: 100, Per: predicate.PerTool}}},
		{"repeats", predicate.Predicate{Repeats: &predicate.Repeats{Key: []string{"tool", "args"}, N: 3, Within: 10}}},
		{"no_progress", predicate.Predicate{NoProgress: &predicate.NoProgress{K: 3}}},
		{"flows", predicate.Predicate{Flows: &predicate.Flow{From: "*.result", To: "*.args", Detect: "any"}}},
		{"trajectory", predicate.Predicate{Trajectory: &predicate.Trajectory{Reference: reference, Mode: predicate.ModeStrict, Args: predicate.ArgsExact, At: predicate.AtDeviation}}},
		{"allowlist", predicate.Predicate{Allowlist: &predicate.Allowlist{Tools: []string{"say_hello", "get_*", "transfer_to_agent"}}}},
		{"evaluation", predicate.Predicate{Evaluation: &predicate.Evaluation{Name: "faithfulness", Label: "fail"}}},
		{"args_detect", predicate.Predicate{Tool: "get_weather", Args: predicate.Fields{detectField(b)}}},
	} {
		b.Run(form.name, func(b *testing.B) {
			cfg := predicate.Config{Predicates: append([]predicate.Named{}, paper...)}
			if form.name != "paper" {
				cfg.Predicates = append(cfg.Predicates, predicate.Named{Name: "added", Predicate: form.pred})
			}
			src, err := NewSource(cfg, sequence.ByConversation, componenttest.NewNopTelemetrySettings())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				latch := src.NewLatch()
				src.Extract(td, &latch)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
		})
	}
}

// detectField is args: {$: {detect: any}}, as the config decodes it.
func detectField(b *testing.B) predicate.FieldMatch {
	var cfg predicate.Config
	err := confmapOf(map[string]any{"predicates": []any{map[string]any{"name": "x", "tool": "t", "args": map[string]any{"$": map[string]any{"detect": "any"}}}}}).Unmarshal(&cfg)
	if err != nil {
		b.Fatal(err)
	}
	return cfg.Predicates[0].Args[0]
}

func confmapOf(m map[string]any) *confmap.Conf { return confmap.NewFromStringMap(m) }
