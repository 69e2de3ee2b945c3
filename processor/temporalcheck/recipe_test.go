// SPDX-License-Identifier: Apache-2.0

package temporalcheck_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/processor/temporalcheck"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// The README's recipes, run as they stand there (the YAML block after
// `# recipe: NAME`) through the processor's factory, over recorded
// conversations: each verdict is "assertion verdict start/end on span".
func TestReadmeRecipes(t *testing.T) {
	recipes := readmeRecipes(t)
	tests := []struct {
		recipe, file string
		want         []string
	}{
		// LangGraph supervisor: the automatic hand-back passes, as the
		// explicit one does; the self-handoff fails, twice.
		{"te1-handback", "langgraph-openinference/strong-auto-handback.json", nil},
		{"te1-handback", "langgraph-openinference/strong-explicit-handback.json", nil},
		{"te1-handback", "langgraph-openinference/weak-self-handoff.json",
			[]string{"te1 failure 2/5 on transfer_to_greeting_agent", "te1 failure 5/7 on __start__"}},
		// OpenAI Agents: the same recipe.
		{"te1-handback", "openai-agents-openinference/strong.json", nil},
		{"te1-handback", "openai-agents-openinference/weak-self-handoff.json",
			[]string{"te1 failure 2/5 on handoff to greeting_agent", "te1 failure 5/8 on greeting_agent"}},
		// Google ADK, TypeScript and Python: every return is a transfer.
		{"te1-handback-adk", "adk-js/strong-run-01.json", nil},
		{"te1-handback-adk", "adk-js/weak-run-05.json",
			[]string{"te1 failure 2/5 on execute_tool transfer_to_agent", "te1 failure 5/7 on invoke_agent greeting_agent"}},
		{"te1-handback-adk", "adk-weather/adk-good-42-0.json", nil},
		// Captures: the weak run's self-handoff, caught by the target bound.
		{"captures", "adk-js/strong-run-01.json", nil},
		{"captures", "adk-js/weak-run-05.json", []string{"no_self_handoff match 1/3 on execute_tool transfer_to_agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.recipe+"/"+tt.file, func(t *testing.T) {
			cfg, ok := recipes[tt.recipe]
			if !ok {
				t.Fatalf("no recipe %q in the README (found %v)", tt.recipe, recipes)
			}
			td := fixtures.Traces(t, tt.file)
			if tt.file == "adk-weather/adk-good-42-0.json" { // the conversation's second turn
				fixtures.Traces(t, "adk-weather/adk-good-42-1.json").ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
			}
			if got := runRecipe(t, cfg, td); !slices.Equal(got, tt.want) {
				t.Errorf("verdicts %q\nwant     %q", got, tt.want)
			}
		})
	}
	// The Python ADK's failing run, across its two turns.
	td := fixtures.Traces(t, "adk-weather/adk-bad-43-0.json")
	fixtures.Traces(t, "adk-weather/adk-bad-43-1.json").ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	want := []string{"te1 failure 2/5 on execute_tool transfer_to_agent", "te1 failure 5/7 on invoke_agent greeting_agent"}
	if got := runRecipe(t, recipes["te1-handback-adk"], td); !slices.Equal(got, want) {
		t.Errorf("adk-weather bad run: verdicts %q, want %q", got, want)
	}
}

// readmeRecipes reads each YAML block of the README that starts with
// `# recipe: NAME`: one processor under `processors`.
func readmeRecipes(t *testing.T) map[string]*confmap.Conf {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*confmap.Conf{}
	for _, block := range strings.Split(string(raw), "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		header, _, _ := strings.Cut(block, "\n")
		name, ok := strings.CutPrefix(header, "# recipe: ")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		path := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(path, []byte(block), 0o600); err != nil {
			t.Fatal(err)
		}
		cm, err := confmaptest.LoadConf(path)
		if err != nil {
			t.Fatalf("recipe %s: %v", name, err)
		}
		processors, err := cm.Sub("processors")
		if err != nil || len(processors.AllKeys()) == 0 {
			t.Fatalf("recipe %s: no processors (%v)", name, err)
		}
		ids := map[string]bool{}
		for _, k := range processors.AllKeys() {
			id, _, _ := strings.Cut(k, confmap.KeyDelimiter)
			ids[id] = true
		}
		if len(ids) != 1 {
			t.Fatalf("recipe %s: %d processors, want one", name, len(ids))
		}
		for id := range ids {
			if out[name], err = processors.Sub(id); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no recipes in the README")
	}
	return out
}

// runRecipe builds the processor from the recipe's configuration, feeds it
// the traces, shuts it down (which evaluates what it still holds) and lists
// the verdicts written on the spans it passed on.
func runRecipe(t *testing.T, conf *confmap.Conf, td ptrace.Traces) []string {
	t.Helper()
	factory := temporalcheck.NewFactory()
	cfg := factory.CreateDefaultConfig()
	if err := conf.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	sink := new(consumertest.TracesSink)
	p, err := factory.CreateTraces(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	spans := td.SpanCount()
	if err := p.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sink.SpanCount() != spans {
		t.Fatalf("%d spans in, %d out", spans, sink.SpanCount())
	}
	return temporalcheck.VerdictsOf(sink)
}
