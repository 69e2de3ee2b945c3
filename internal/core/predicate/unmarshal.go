// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/confmap"
)

// The YAML forms are decoded by hand rather than by mapstructure so that a
// predicate can be a bare string or a map at any depth (set and reset nest),
// and so that an unknown key is reported with the predicate's name.

var (
	_ confmap.Unmarshaler = (*Predicate)(nil)
	_ confmap.Unmarshaler = (*Named)(nil)
)

var predicateKeys = []string{"condition", "tool", "transfer_to", "agent", "failed", "args", "result", "capture", "set", "reset", "optional", "budget", "repeats", "no_progress", "evaluation", "allowlist", "trajectory", "flows"}

// UnmarshalText takes the string form: an OTTL condition.
func (p *Predicate) UnmarshalText(text []byte) error {
	*p = Predicate{Condition: string(text)}
	return nil
}

// Unmarshal takes the map form.
func (p *Predicate) Unmarshal(conf *confmap.Conf) error {
	got, err := decodePredicate(conf.ToStringMap())
	if err != nil {
		return err
	}
	*p = got
	return nil
}

// Unmarshal takes a predicates list entry: name plus a predicate's keys.
func (n *Named) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	name, ok := raw["name"].(string)
	if _, given := raw["name"]; given && !ok {
		return fmt.Errorf("predicate name: must be a string, got %T", raw["name"])
	}
	delete(raw, "name")
	p, err := decodePredicate(raw)
	if err != nil {
		if name == "" {
			return fmt.Errorf("predicate: %w", err)
		}
		return fmt.Errorf("predicate %q: %w", name, err)
	}
	*n = Named{Name: name, Predicate: p}
	return nil
}

// decodePredicate reads the string or map form of a predicate.
func decodePredicate(raw any) (Predicate, error) {
	switch v := raw.(type) {
	case nil:
		return Predicate{}, nil
	case string:
		return Predicate{Condition: v}, nil
	case map[string]any:
		return decodeMap(v)
	}
	return Predicate{}, fmt.Errorf("must be an OTTL condition (a string) or a map, got %T", raw)
}

func decodeMap(m map[string]any) (Predicate, error) {
	var p Predicate
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report the same error whatever the map's order
	for _, k := range keys {
		var err error
		switch k {
		case "condition":
			p.Condition, err = stringValue(k, m[k])
		case "tool":
			p.Tool, err = stringValue(k, m[k])
		case "transfer_to":
			p.TransferTo, err = stringValue(k, m[k])
		case "agent":
			p.Agent, err = stringValue(k, m[k])
		case "failed":
			p.Failed, err = boolValue(k, m[k])
		case "args":
			p.Args, err = decodeFields(k, m[k])
		case "result":
			p.Result, err = decodeFields(k, m[k])
		case "capture":
			p.Capture, err = decodeCaptures(m[k])
		case "set":
			p.Set, err = nested(k, m[k])
		case "reset":
			p.Reset, err = nested(k, m[k])
		case "budget":
			p.Budget, err = decodeBudget(m[k])
		case "repeats":
			p.Repeats, err = decodeRepeats(m[k])
		case "no_progress":
			p.NoProgress, err = decodeNoProgress(m[k])
		case "flows":
			p.Flows, err = decodeFlow(m[k])
		case "trajectory":
			p.Trajectory, err = decodeTrajectory(m[k])
		case "allowlist":
			p.Allowlist, err = decodeAllowlist(m[k])
		case "evaluation":
			p.Evaluation, err = decodeEvaluation(m[k])
		case "optional":
			var b *bool
			if b, err = boolValue(k, m[k]); b != nil {
				p.Optional = *b
			}
		default:
			err = fmt.Errorf("unknown key %q: valid keys are %s", k, strings.Join(predicateKeys, ", "))
		}
		if err != nil {
			return Predicate{}, err
		}
	}
	return p, nil
}

func stringValue(key string, v any) (string, error) {
	s, ok := v.(string)
	if !ok && v != nil {
		return "", fmt.Errorf("%s: must be a string, got %T", key, v)
	}
	return s, nil
}

// boolValue takes a YAML boolean; null reads as unset.
func boolValue(key string, v any) (*bool, error) {
	switch b := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return &b, nil
	}
	return nil, fmt.Errorf("%s: must be true or false, got %T %v", key, v, v)
}

func nested(key string, v any) (*Predicate, error) {
	p, err := decodePredicate(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return &p, nil
}
