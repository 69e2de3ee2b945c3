// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"

	"github.com/agentguard/agentguard/internal/core/dtmc"
)

func decodeProperty(raw any) (Property, error) {
	var holder struct {
		Property Property `mapstructure:"property"`
	}
	err := confmap.NewFromStringMap(map[string]any{"property": raw}).Unmarshal(&holder)
	return holder.Property, err
}

func TestPropertyForms(t *testing.T) {
	for _, c := range []struct {
		raw  any
		want Property
		err  string
	}{
		{raw: "always_safe", want: Property{Kind: dtmc.AlwaysSafe}},
		{raw: map[string]any{"bounded": map[string]any{"horizon": 7}}, want: Property{Kind: dtmc.Bounded, Horizon: 7}},
		{raw: map[string]any{"response": map[string]any{"trigger": "a", "response": "b", "within": 3}},
			want: Property{Kind: dtmc.Response, Trigger: "a", Response: "b", Within: 3}},
		{raw: map[string]any{"bounded": map[string]any{"within": 3}}, err: `property bounded: unknown key "within" (valid keys: [horizon])`},
		{raw: map[string]any{"bounded": 3}, err: "property bounded: want a map of [horizon], got int"},
		{raw: map[string]any{"bounded": nil, "response": nil}, err: "got 2 keys"},
	} {
		got, err := decodeProperty(c.raw)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.raw, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%v: %+v, %v", c.raw, got, err)
		}
	}
	for _, c := range []struct {
		p    Property
		want string
	}{
		{Property{Kind: dtmc.Bounded}, "horizon must be 1 to 10000, got 0"},
		{Property{Kind: dtmc.Bounded, Horizon: 1e9}, "horizon must be 1 to 10000"},
		{Property{Kind: dtmc.Response, Trigger: "a", Response: "b", Within: 1 << 62}, "within must be 0 to 1000"},
	} {
		if err := c.p.validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
	if _, err := decodeProperty(map[string]any{"response": map[string]any{"trigger": "a", "response": "b"}}); err == nil || !strings.Contains(err.Error(), "within is required") {
		t.Errorf("response without within: %v", err)
	}
}

// FuzzProperty: any kind and parameters decode into a property or fail with
// an error, and a decoded property validates or fails with an error.
func FuzzProperty(f *testing.F) {
	f.Add("always_safe", "", "", 0)
	f.Add("bounded", "horizon", "", 10)
	f.Add("response", "trigger", "knob_on", 5)
	f.Add("eventually", "x", "y", -1)
	f.Fuzz(func(t *testing.T, kind, key, text string, n int) {
		for _, raw := range []any{
			kind,
			map[string]any{kind: map[string]any{key: n}},
			map[string]any{kind: map[string]any{key: text}},
			map[string]any{kind: text},
		} {
			p, err := decodeProperty(raw)
			if err != nil {
				continue
			}
			if err := p.validate(); err == nil && p.Kind != dtmc.AlwaysSafe && p.Kind != dtmc.Bounded && p.Kind != dtmc.Response {
				t.Fatalf("%v: validated an unknown kind %q", raw, p.Kind)
			}
		}
	})
}
