// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

func TestListMapFormIsSortedByName(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{"predicates": map[string]any{
		"xferToWeather": map[string]any{"transfer_to": "weather_agent_v2"},
		"sayHello":      map[string]any{"tool": "say_hello"},
		"slow":          "span.end_time_unix_nano - span.start_time_unix_nano > 5000000000",
	}})
	var cfg Config
	if err := conf.Unmarshal(&cfg); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range cfg.Predicates {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "sayHello,slow,xferToWeather" || cfg.Predicates[0].Tool != "say_hello" ||
		cfg.Predicates[1].Condition == "" || cfg.Predicates[2].TransferTo != "weather_agent_v2" {
		t.Fatalf("decoded %+v", cfg.Predicates)
	}
}

func TestListMapFormErrorsNameThePredicate(t *testing.T) {
	conf := confmap.NewFromStringMap(map[string]any{"predicates": map[string]any{
		"sayHello": map[string]any{"tool": "say_hello", "transfer_to": "x"},
	}})
	var cfg Config
	err := conf.Unmarshal(&cfg)
	if err == nil {
		err = cfg.Validate()
	}
	if err == nil || !strings.Contains(err.Error(), `predicate "sayHello"`) {
		t.Fatalf("error %v", err)
	}
}
