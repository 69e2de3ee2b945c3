// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"fmt"
	"slices"

	"go.opentelemetry.io/collector/confmap"

	"github.com/agentguard/agentguard/internal/core/dtmc"
)

// Property is what P_safe is the probability of. In YAML it is the string
// always_safe, or a map with one key: {bounded: {horizon: 10}} or
// {response: {trigger: ..., response: ..., within: 5}}.
type Property struct {
	Kind dtmc.Kind
	// Horizon is bounded's k: P_safe = 1 − P(F≤k unsafe).
	Horizon int
	// Trigger and Response are formulas over the predicates; Within is the
	// K of G(trigger ⇒ F[0,K] response).
	Trigger, Response string
	Within            int
}

var _ confmap.Unmarshaler = (*Property)(nil)

var propertyParams = map[dtmc.Kind][]string{
	dtmc.AlwaysSafe: nil,
	dtmc.Bounded:    {"horizon"},
	dtmc.Response:   {"trigger", "response", "within"},
}

// UnmarshalText takes the string form, a property without parameters.
func (p *Property) UnmarshalText(text []byte) error {
	*p = Property{Kind: dtmc.Kind(text)}
	return nil
}

// Unmarshal takes the map form.
func (p *Property) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	if len(raw) != 1 {
		return fmt.Errorf("property: want one of %s, got %d keys", kindList(), len(raw))
	}
	for kind, params := range raw {
		allowed, ok := propertyParams[dtmc.Kind(kind)]
		if !ok {
			return fmt.Errorf("property: unknown kind %q: valid kinds are %s", kind, kindList())
		}
		m, isMap := params.(map[string]any)
		if params != nil && !isMap {
			return fmt.Errorf("property %s: want a map of %v, got %T", kind, allowed, params)
		}
		for key := range m {
			if !slices.Contains(allowed, key) {
				return fmt.Errorf("property %s: unknown key %q (valid keys: %v)", kind, key, allowed)
			}
		}
		if _, given := m["within"]; dtmc.Kind(kind) == dtmc.Response && !given {
			return fmt.Errorf("property response: within is required (the events the response may take, 0: at the trigger itself)")
		}
		sub, err := conf.Sub(kind)
		if err != nil {
			return fmt.Errorf("property %s: %w", kind, err)
		}
		var body struct {
			Horizon  int    `mapstructure:"horizon"`
			Trigger  string `mapstructure:"trigger"`
			Response string `mapstructure:"response"`
			Within   int    `mapstructure:"within"`
		}
		if err := sub.Unmarshal(&body); err != nil {
			return fmt.Errorf("property %s: %w", kind, err)
		}
		*p = Property{Kind: dtmc.Kind(kind), Horizon: body.Horizon, Trigger: body.Trigger, Response: body.Response, Within: body.Within}
	}
	return nil
}

// MaxHorizon and MaxWithin bound the work of solving a property: bounded
// takes horizon sweeps of the chain, response solves a product with
// within + 2 copies of it.
const (
	MaxHorizon = 10_000
	MaxWithin  = 1_000
)

// validate checks the kind and its parameters; formulas are checked against
// the predicates by the config.
func (p Property) validate() error {
	switch p.Kind {
	case dtmc.AlwaysSafe:
		return nil
	case dtmc.Bounded:
		if p.Horizon <= 0 || p.Horizon > MaxHorizon {
			return fmt.Errorf("property bounded: horizon must be 1 to %d, got %d", MaxHorizon, p.Horizon)
		}
		return nil
	case dtmc.Response:
		if p.Trigger == "" || p.Response == "" {
			return fmt.Errorf("property response: trigger and response are required")
		}
		if p.Within < 0 || p.Within > MaxWithin {
			return fmt.Errorf("property response: within must be 0 to %d, got %d", MaxWithin, p.Within)
		}
		return nil
	}
	return fmt.Errorf("property: unknown kind %q: valid kinds are %s", p.Kind, kindList())
}

// solved is the property as the DTMC engine takes it.
func (p Property) solved(unsafe string) dtmc.Property {
	return dtmc.Property{Kind: p.Kind, Unsafe: unsafe, Horizon: p.Horizon, Trigger: p.Trigger, Response: p.Response, Within: p.Within}
}

func kindList() string {
	return fmt.Sprintf("%q, %q and %q", dtmc.AlwaysSafe, dtmc.Bounded, dtmc.Response)
}
