// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
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
	cfg, err := loadConfig(t, "paper")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.GroupBy != GroupByTrace || cfg.Report != ReportViolations || cfg.Wait != 10*time.Second || cfg.RootWait != time.Second ||
		cfg.MaxTraces != 100_000 || len(cfg.Predicates) != 6 || len(cfg.Assertions) != 3 {
		t.Errorf("paper: %+v", cfg)
	}
	if cfg.Predicates[0].Name != "xferToGreeting" || cfg.Predicates[0].TransferTo != "greeting_agent" || cfg.Predicates[3].Tool != "say_hello" {
		t.Errorf("predicates %+v", cfg.Predicates)
	}
	cfg, err = loadConfig(t, "conversation")
	if err != nil {
		t.Fatal(err)
	}
	want := assertion.Config{Name: "greeted", Always: "xferToGreeting >> sayHello", OnEnd: "fail"}
	if cfg.GroupBy != "gen_ai.conversation.id" || cfg.Report != ReportAll || cfg.Wait != 30*time.Second || cfg.GroupTimeout != 10*time.Minute ||
		cfg.MaxTraces != 5000 || cfg.MaxSpansPerTrace != 2000 || cfg.MaxEventsPerGroup != 500 || cfg.MaxThreads != 1000 || cfg.Workers != 2 || cfg.WarnUnheldAfter != 500 ||
		!sameAssertion(cfg.Assertions[0], want) || cfg.Assertions[1].Never != "slowCall" || !strings.Contains(cfg.Predicates[2].Condition, "end_time_unix_nano") {
		t.Errorf("conversation: %+v", cfg)
	}
}

func sameAssertion(a, b assertion.Config) bool {
	return a.Name == b.Name && a.Always == b.Always && a.Never == b.Never && a.Initially == b.Initially && a.OnEnd == b.OnEnd &&
		len(a.Pattern) == 0 && len(b.Pattern) == 0
}

// Patterns load as the collector reads them: any key other than the
// assertion's own names a pattern.
func TestPatternsLoad(t *testing.T) {
	cfg, err := loadConfig(t, "patterns")
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := assertion.Compile(cfg.Assertions, cfg.predicateNames(), cfg.MaxThreads)
	if err != nil {
		t.Fatal(err)
	}
	if len(compiled) != 4 || compiled[0].Expression != "xferToWeather >> (getWeather | xferToGreeting | xferToFarewell)" ||
		compiled[1].Pattern != "max_calls(x: sayHello, n: 1)" || compiled[2].Kind != "initially" ||
		compiled[3].Pattern != "never(x: xferToFarewell)" || compiled[3].Expression != "xferToFarewell" {
		t.Errorf("patterns: %+v", compiled)
	}
	for name, want := range map[string]string{
		"bad_pattern":  `assertion "te3": unknown pattern "respnse": the patterns are requires, before`,
		"long_pattern": `max_events_per_group 2000000: assertion "once" is a pattern, which waits at most 1048576 events`,
	} {
		if _, err := loadConfig(t, name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
}

// The form the paper's configurations use: predicates as a map, bits in name order.
func TestMapFormOfPredicates(t *testing.T) {
	cfg, err := loadConfig(t, "mapform")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.predicateNames(), ","); got != "sayHello,slowCall,xferToGreeting,xferToWeather" {
		t.Fatalf("predicates %s", got)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, wants := range map[string][]string{
		"bad_expression": {`assertion "te1": always: "sayHello >> (sayHello": col 22: expected ')', found end of expression`},
		"undeclared":     {`assertion "te9": never: "sayHello + sayGoodbye": col 12: unknown predicate "sayGoodbye" (declared: sayHello)`},
		"bad_values": {`report: unknown value "some": valid values are "violations" and "all"`, "wait: must be a positive duration, got -1s",
			"max_traces: must be positive, got 0", "workers: must not be negative, got -1", "warn_unheld_after: must not be negative, got -5", `assertion "a": on_end: unknown end policy "later"`},
		"no_assertions": {"assertions: at least one assertion is required"},
	} {
		_, err := loadConfig(t, name)
		for _, want := range wants {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %v, want it to contain %q", name, err, want)
			}
		}
	}
}

func TestConfigStruct(t *testing.T) {
	if err := componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()); err != nil {
		t.Fatal(err)
	}
}

// warm_up follows group_timeout with storage unless set, is off without
// storage unless set (nothing tells a restart from a first start); 0 turns
// it off; a negative one is refused by name.
func TestWarmUpConfig(t *testing.T) {
	for _, tt := range []struct {
		raw  map[string]any
		want time.Duration
		err  string
	}{
		{map[string]any{"group_timeout": "2m"}, 0, ""},
		{map[string]any{"group_timeout": "2m", "storage": "file_storage"}, 2 * time.Minute, ""},
		{map[string]any{"warm_up": "0s"}, 0, ""},
		{map[string]any{"warm_up": "30s"}, 30 * time.Second, ""},
		{map[string]any{"warm_up": "-1s"}, 0, "warm_up: must not be negative, got -1s"},
	} {
		cfg := createDefaultConfig()
		cfg.Assertions = []assertion.Config{{Name: "a", Always: "x"}}
		if err := confmap.NewFromStringMap(map[string]any{"predicates": map[string]any{"x": map[string]any{"tool": "x"}}}).Unmarshal(cfg); err != nil {
			t.Fatal(err)
		}
		if err := confmap.NewFromStringMap(tt.raw).Unmarshal(cfg); err != nil {
			t.Fatal(err)
		}
		err := cfg.Validate()
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%v: error %v, want %q", tt.raw, err, tt.err)
			}
		case err != nil:
			t.Errorf("%v: %v", tt.raw, err)
		case cfg.StageConfig().WarmUp != tt.want:
			t.Errorf("%v: warm-up %v, want %v", tt.raw, cfg.StageConfig().WarmUp, tt.want)
		}
	}
}
