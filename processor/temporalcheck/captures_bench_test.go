// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"testing"

	"go.opentelemetry.io/collector/confmap"

	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// BenchmarkThroughputCaptures: the README's captures recipe (a self-handoff
// caught by the transfer target bound, a weather report about the city
// asked) over ADK for TypeScript's weak run, beside assertions of the same
// shapes over plain predicates (one violation each way, so that the cost of
// writing explanations is the same; the allocation-free evaluator) and a
// pass-through processor, in the same run. One op is one trace (its
// two turns under one trace ID); ns/span is what to compare.
func BenchmarkThroughputCaptures(b *testing.B) {
	tmpl := fixtures.Traces(b, "adk-js/weak-run-05.json")
	predicates := []any{
		map[string]any{"name": "xfer", "tool": "transfer_to_agent", "capture": map[string]any{"agent": "args.agentName"}},
		map[string]any{"name": "xferSame", "tool": "transfer_to_agent", "args": map[string]any{"agentName": map[string]any{"captured": "agent"}}},
		map[string]any{"name": "other", "condition": `span.attributes["gen_ai.tool.name"] != "transfer_to_agent"`},
		map[string]any{"name": "askCity", "tool": "get_weather", "capture": map[string]any{"city": "args.city"}},
		map[string]any{"name": "cityReport", "tool": "get_weather", "result": map[string]any{"report": map[string]any{"contains_captured": "city"}}},
		map[string]any{"name": "xferToGreeting", "transfer_to": "greeting_agent"},
		map[string]any{"name": "sayHello", "tool": "say_hello"},
		map[string]any{"name": "getWeather", "tool": "get_weather"},
	}
	b.Run("passthrough", func(b *testing.B) { fixtures.PassThrough(b, metadata.Type, tmpl) })
	for _, tc := range []struct {
		name       string
		assertions []any
	}{
		{"without_captures", []any{
			map[string]any{"name": "no_second_greeting", "never": "xferToGreeting + (xferToGreeting | other * (1,10) + xferToGreeting)"},
			map[string]any{"name": "weather_call", "never": "getWeather / ~getWeather"},
		}},
		{"with_captures", []any{
			map[string]any{"name": "no_self_handoff", "never": "xfer + (xferSame | other * (1,10) + xferSame)"},
			map[string]any{"name": "report_of_the_city_asked", "never": "askCity / ~cityReport"},
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cfg := NewFactory().CreateDefaultConfig().(*Config)
			if err := confmap.NewFromStringMap(map[string]any{"predicates": predicates, "assertions": tc.assertions}).Unmarshal(cfg); err != nil {
				b.Fatal(err)
			}
			if err := confmap.Validate(cfg); err != nil {
				b.Fatal(err)
			}
			throughputOnFakeClock(b, tmpl, cfg, nil)
		})
	}
}
