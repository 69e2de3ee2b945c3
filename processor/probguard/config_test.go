// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/stage"
	"github.com/agentguard/agentguard/processor/probguard/internal/metadata"
)

func loadConfig(t testing.TB, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		return nil, err
	}
	return cfg, confmap.Validate(cfg)
}

func TestLoadConfig(t *testing.T) {
	cfg, err := loadConfig(t, "stove")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GroupBy != "trace_id" || cfg.Property.Kind != dtmc.AlwaysSafe || cfg.Threshold != 0.965 || cfg.Report != guard.ReportCrossing ||
		cfg.UnknownState != guard.UnknownAlert || cfg.Wait != 2*time.Second || cfg.Learn != nil || cfg.ValidTransitions.MaxChanges != 1 {
		t.Errorf("stove: %+v", cfg)
	}
	if names := cfg.predicateNames(); len(names) != 2 || names[0] != "fork_on_burner" || names[1] != "knob_on" || cfg.Predicates[1].Set.Tool != "turn_on_stove" {
		t.Errorf("predicates %+v", cfg.Predicates)
	}

	cfg, err = loadConfig(t, "full")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Threshold: 0.5, Report: guard.ReportEvery, UnknownState: guard.UnknownPass,
		Settings: stage.Settings{GroupBy: "conversation", Wait: 5 * time.Second, RootWait: time.Second, GroupTimeout: 10 * time.Minute,
			MaxTraces: 5000, MaxSpansPerTrace: 2000}}
	if cfg.GroupBy != want.GroupBy || cfg.Threshold != want.Threshold || cfg.Report != want.Report || cfg.UnknownState != want.UnknownState ||
		cfg.Wait != want.Wait || cfg.RootWait != want.RootWait || cfg.GroupTimeout != want.GroupTimeout || cfg.MaxTraces != want.MaxTraces ||
		cfg.MaxSpansPerTrace != want.MaxSpansPerTrace || cfg.Events == nil {
		t.Errorf("full: %+v", cfg)
	}
	if cfg.Property != (Property{Kind: dtmc.Bounded, Horizon: 10}) || cfg.Smoothing != (dtmc.Smoothing{Mode: dtmc.Laplace, Alpha: 0.5}) {
		t.Errorf("property %+v, smoothing %+v", cfg.Property, cfg.Smoothing)
	}
	r := cfg.ValidTransitions
	if r.MaxChanges != 1 || len(r.Irreversible) != 1 || len(r.Forbidden) != 1 || r.Forbidden[0] != [2]string{"00", "11"} {
		t.Errorf("valid_transitions %+v", r)
	}
	if *cfg.Learn != (LearnConfig{Output: "testdata/online.json", Every: 30 * time.Second, Serve: true}) {
		t.Errorf("learn %+v", cfg.Learn)
	}
	if cfg.RiskEndpoint == nil || cfg.RiskEndpoint.String() != "riskendpoint/agents" {
		t.Errorf("risk_endpoint %v", cfg.RiskEndpoint)
	}
}

func TestResponseAndLearnOnlyConfigs(t *testing.T) {
	cfg, err := loadConfig(t, "response")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Property != (Property{Kind: dtmc.Response, Trigger: "knob_on", Response: "not knob_on", Within: 5}) {
		t.Errorf("response %+v", cfg.Property)
	}
	cfg, err = loadConfig(t, "learn_only")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "" || cfg.Learn.interval() != time.Minute {
		t.Errorf("learn_only %+v", cfg)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, wants := range map[string][]string{
		"bad_unsafe":   {"unsafe: col 28: missing closing ) for ( at col 20"},
		"bad_property": {`property: unknown kind "eventually": valid kinds are "always_safe", "bounded" and "response"`},
		"bad_values": {"threshold: want a probability in (0, 1], got 1.5",
			`report: unknown value "sometimes"`, `unknown_state: unknown value "ignore"`},
		"no_model": {"model: required"},
	} {
		_, err := loadConfig(t, name)
		for _, want := range wants {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %v\nlacks %q", name, err, want)
			}
		}
	}
}

// Validate reads no file: a model file or learn.output that is missing,
// is not a model or does not match passes it. Creating the processor reads
// them, once, and fails with the message.
func TestModelFilesAreCheckedAtCreation(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		edit         func(*Config)
		want         string
	}{
		{"other predicates", "other_predicates", nil,
			"model testdata/stove.json: learned over the predicates [fork_on_burner knob_on], but the configuration declares [knob_on pot_on]"},
		{"other rules", "other_rules", nil, "model testdata/stove.json: learned under valid_transitions {MaxChanges:1"},
		{"other rules", "other_rules", nil, "the configuration says {MaxChanges:0"},
		{"missing model", "stove", func(c *Config) { c.Model = "testdata/missing.json" }, "model: open testdata/missing.json"},
		{"learn.output not a model", "learn_only", func(c *Config) { c.Learn.Output = filepath.Join("testdata", "config.yaml") },
			"learn.output holds counts to go on from, but"},
		{"learn.output of other predicates", "stove", func(c *Config) {
			c.Model = ""
			c.Learn = &LearnConfig{Output: "testdata/stove.json"}
			c.Predicates[0], c.Predicates[1] = c.Predicates[1], c.Predicates[0]
			c.Unsafe = "knob_on"
		}, "learn.output holds counts to go on from, but: model testdata/stove.json: learned over the predicates [fork_on_burner knob_on]"},
	} {
		cfg, err := loadConfig(t, tc.config)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.edit != nil {
			tc.edit(cfg)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: Validate read a file: %v", tc.name, err)
		}
		_, err = NewFactory().CreateTraces(context.Background(), nopSettings(), cfg, consumertest.NewNop())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: creation error %v\nlacks %q", tc.name, err, tc.want)
		}
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := createDefaultConfig()
	if cfg.Threshold != 0.7 || cfg.Report != guard.ReportCrossing || cfg.UnknownState != guard.UnknownAlert || cfg.Property.Kind != dtmc.AlwaysSafe {
		t.Errorf("%+v", cfg)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "predicates: at least one") {
		t.Errorf("an empty config must not validate: %v", err)
	}
}

// OTTL that does not compile fails the processor's creation, naming the
// predicate: the collector does not start.
func TestBadOTTLFailsCreation(t *testing.T) {
	cfg := stoveConfig(t)
	cfg.Predicates[0].Condition = `span.attributes["env.fork_on_burner"] ==`
	_, err := NewFactory().CreateTraces(context.Background(), nopSettings(), cfg, consumertest.NewNop())
	if err == nil || !strings.Contains(err.Error(), "fork_on_burner") {
		t.Errorf("error %v", err)
	}
}
