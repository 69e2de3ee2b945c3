// SPDX-License-Identifier: Apache-2.0

// Package assertion runs named temporal-expression assertions over the event
// sequences of groups (a trace, or a conversation across traces), and writes
// their verdicts onto the spans that decided them. The temporalcheck
// processor and `agentguard check` share it, so both judge alike.
package assertion

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/confmap"

	"github.com/agentguard/agentguard/internal/core/pattern"
	"github.com/agentguard/agentguard/internal/core/texpr"
)

// Config is one assertion as a user writes it.
type Config struct {
	// Name identifies the assertion in verdicts and metrics.
	Name string `mapstructure:"name"`
	// Always: every evaluation of this expression, started at each event,
	// must match (a FAILURE is a violation).
	Always string `mapstructure:"always"`
	// Never: no evaluation of this expression may match (a MATCH is a
	// violation). Exactly one of always, never, initially and a pattern.
	Never string `mapstructure:"never"`
	// Initially: one evaluation of this expression, started at the group's
	// first event, must match: an obligation of the whole group.
	Initially string `mapstructure:"initially"`
	// OnEnd says what an evaluation still waiting when its group ends means:
	// inconclusive (default, PENDING), fail (a violation), or ignore.
	OnEnd string `mapstructure:"on_end"`
	// Enforce is what a violation this assertion would decide means to an
	// agent asking before it acts (the risk endpoint's decisions): deny,
	// warn (default) or off. It changes no verdict, so a checkpoint does
	// not depend on it.
	Enforce string `mapstructure:"enforce" json:"-"`
	// Pattern holds every other key: one names a pattern of the library, its
	// value the parameters (never_after: {x: readSecret, y: network}). The
	// pattern's expansion sets the kind, the expression and on_end.
	Pattern map[string]any `mapstructure:",remain"`
}

// The values of enforce.
const (
	EnforceDeny = "deny"
	EnforceWarn = "warn"
	EnforceOff  = "off"
)

// Compiled is an assertion ready to run.
type Compiled struct {
	Name       string
	Kind       string // "always" or "never"
	Expression string
	// Pattern is the pattern the assertion was written as (empty for an
	// expression), with its parameters; Meaning says it in plain words.
	Pattern string
	Meaning string
	Spec    texpr.Assertion
	// Enforce is Config.Enforce, warn when not set.
	Enforce string
	// Predicates are the declared predicates in bit order, for explanations.
	Predicates []string
}

// Compile checks and compiles assertions against the declared predicate
// names. Every error names the assertion and, for expressions, the column.
func Compile(cfgs []Config, predicates []string, maxThreads int) ([]Compiled, error) {
	var errs error
	seen := map[string]bool{}
	out := make([]Compiled, 0, len(cfgs))
	for i, c := range cfgs {
		a, err := compileOne(c, predicates, maxThreads)
		a.Predicates = predicates
		switch {
		case c.Name == "":
			errs = errors.Join(errs, fmt.Errorf("assertions[%d]: name is required", i))
		case seen[c.Name]:
			errs = errors.Join(errs, fmt.Errorf("assertion %q: declared twice", c.Name))
		case err != nil:
			errs = errors.Join(errs, fmt.Errorf("assertion %q: %w", c.Name, err))
		}
		seen[c.Name] = true
		out = append(out, a)
	}
	if errs != nil {
		return nil, errs
	}
	return out, nil
}

func compileOne(c Config, predicates []string, maxThreads int) (Compiled, error) {
	var given []string
	for _, f := range []struct{ key, value string }{{"always", c.Always}, {"never", c.Never}, {"initially", c.Initially}} {
		if f.value != "" {
			given = append(given, f.key)
		}
	}
	keys := make([]string, 0, len(c.Pattern))
	for key := range c.Pattern {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	given = append(given, keys...)
	if len(given) != 1 {
		return Compiled{}, fmt.Errorf("give exactly one of always, never, initially or a pattern (%s), got %s",
			strings.Join(pattern.Names(), ", "), orNothing(given))
	}
	kind, src, onEnd := given[0], c.Always+c.Never+c.Initially, c.OnEnd
	var pat pattern.Pattern
	if len(c.Pattern) > 0 {
		if c.OnEnd != "" {
			return Compiled{}, fmt.Errorf("on_end %q: a pattern sets its own; write its expansion to choose another", c.OnEnd)
		}
		p, err := pattern.New(kind, c.Pattern[kind], predicates)
		if err != nil {
			return Compiled{}, err
		}
		pat, kind, src, onEnd = p, p.Kind, p.Expr, p.OnEnd
	}
	policy, err := texpr.ParseEndPolicy(onEnd)
	if err != nil {
		return Compiled{}, fmt.Errorf("on_end: %w", err)
	}
	enforce := cmp.Or(c.Enforce, EnforceWarn)
	if !slices.Contains([]string{EnforceDeny, EnforceWarn, EnforceOff}, enforce) {
		return Compiled{}, fmt.Errorf("enforce: unknown value %q: valid values are %q, %q and %q", c.Enforce, EnforceDeny, EnforceWarn, EnforceOff)
	}
	e, err := texpr.Parse(src, predicates)
	if err != nil {
		return Compiled{}, fmt.Errorf("%s: %q: %w", kind, src, err)
	}
	out := Compiled{Name: c.Name, Kind: kind, Expression: src, Enforce: enforce, Spec: texpr.Assertion{
		Expr: e, Never: kind == "never", Anchored: kind == "initially", OnEnd: policy, MaxThreads: maxThreads, Trees: texpr.TreesViolations,
	}}
	if pat.Name != "" {
		out.Pattern, out.Meaning = pat.String(), pat.Meaning()
	}
	return out, nil
}

func orNothing(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, " and ")
}

// Unmarshal reads an assertion as the collector gives it. never with
// parameters ({x: ...}) is the never pattern; never with text, the
// expression: both are the same key, so it is sorted out here.
func (c *Config) Unmarshal(conf *confmap.Conf) error {
	raw := conf.ToStringMap()
	params, isPattern := raw["never"].(map[string]any)
	if isPattern {
		delete(raw, "never")
	}
	type plain Config // without this method
	if err := confmap.NewFromStringMap(raw).Unmarshal((*plain)(c)); err != nil {
		return err
	}
	if isPattern {
		if c.Pattern == nil {
			c.Pattern = map[string]any{}
		}
		c.Pattern["never"] = params
	}
	return nil
}
