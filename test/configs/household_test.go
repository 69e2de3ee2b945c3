// SPDX-License-Identifier: Apache-2.0

package configs_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentguard/agentguard/internal/fixtures"
	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/processor/probguard"
)

// householdDir is the household example: its configuration and model.
var householdDir = filepath.Join("..", "..", "examples", "household")

// probguardOf is the example's processor, on the committed model, started.
func probguardOf(t *testing.T, sink *consumertest.TracesSink) interface {
	ConsumeTraces(context.Context, ptrace.Traces) error
	Shutdown(context.Context) error
} {
	p := newHouseholdProcessor(t, sink)
	if err := p.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return p
}

// newHouseholdProcessor is the example's processor, on the committed model,
// not started.
func newHouseholdProcessor(t testing.TB, next consumer.Traces) processor.Traces {
	t.Helper()
	conf, err := confmaptest.LoadConf(filepath.Join(householdDir, "collector.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := conf.Sub("processors::probguard")
	if err != nil {
		t.Fatal(err)
	}
	f := probguard.NewFactory()
	cfg := f.CreateDefaultConfig().(*probguard.Config)
	if err := sub.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Model = filepath.Join(householdDir, "model.json") // confmaptest does not expand ${env:...}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := f.CreateTraces(context.Background(), processortest.NewNopSettings(f.Type()), cfg, next)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The real LangGraph/OpenInference episodes through the processor: ep-004
// (unsafe at its 8th tool call) is warned when the agent leaves the kitchen
// with the stove on and marked a violation at the 8th; ep-001 (left the
// stove on, back in time) is warned as it leaves; ep-010 (never left it on)
// is not.
func TestRealEpisodesThroughTheProcessor(t *testing.T) {
	want := map[string][]string{
		"ep-001": {"risk 8 go_to"}, // it checks the pot twice, then leaves
		"ep-004": {"risk 5 go_to", "violation 8 wait"},
		"ep-010": nil,
	}
	for ep, wantNotes := range want {
		sink := new(consumertest.TracesSink)
		p := probguardOf(t, sink)
		td := fixtures.Traces(t, "household-langgraph/"+ep+".json")
		in := td.SpanCount()
		if err := p.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
		if err := p.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := sink.SpanCount(); got != in {
			t.Errorf("%s: %d spans in, %d out", ep, in, got)
		}
		if got := notes(sink); !slices.Equal(got, wantNotes) {
			t.Errorf("%s: annotations %q, want %q", ep, got, wantNotes)
		}
	}
}

// notes lists probguard's annotations as "risk|violation EVENT TOOL", by event.
func notes(sink *consumertest.TracesSink) []string {
	type note struct {
		event int64
		text  string
	}
	var all []note
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					for _, ev := range sp.Events().All() {
						a := ev.Attributes().AsRaw()
						if a[verdictattr.Check] != verdictattr.CheckProb {
							continue
						}
						kind, _ := a[verdictattr.ScoreLabel].(string)
						if a[verdictattr.Violation] == true {
							kind = "violation"
						}
						event := a[verdictattr.EventNumber].(int64)
						all = append(all, note{event, fmt.Sprintf("%s %d %s", kind, event, sp.Name())})
					}
				}
			}
		}
	}
	slices.SortFunc(all, func(a, b note) int { return int(a.event - b.event) })
	var out []string
	for _, n := range all {
		out = append(out, n.text)
	}
	return out
}
