// Package assertion runs named temporal-expression assertions over the event
// sequences of groups (a trace, or a conversation across traces), and writes
// their verdicts onto the spans that decided them. The temporalcheck
// processor and `agentguard check` share it, so both judge alike.
package assertion

import (
	"errors"
	"fmt"

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
	// violation). Exactly one of always and never.
	Never string `mapstructure:"never"`
	// OnEnd says what an evaluation still waiting when its group ends means:
	// inconclusive (default, PENDING), fail (a violation), or ignore.
	OnEnd string `mapstructure:"on_end"`
}

// Compiled is an assertion ready to run.
type Compiled struct {
	Name       string
	Kind       string // "always" or "never"
	Expression string
	Spec       texpr.Assertion
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
	kind, src := "always", c.Always
	switch {
	case c.Always != "" && c.Never != "":
		return Compiled{}, errors.New("give one of always and never, not both")
	case c.Never != "":
		kind, src = "never", c.Never
	case c.Always == "":
		return Compiled{}, errors.New("always or never is required")
	}
	policy, err := texpr.ParseEndPolicy(c.OnEnd)
	if err != nil {
		return Compiled{}, fmt.Errorf("on_end: %w", err)
	}
	e, err := texpr.Parse(src, predicates)
	if err != nil {
		return Compiled{}, fmt.Errorf("%s: %q: %w", kind, src, err)
	}
	return Compiled{Name: c.Name, Kind: kind, Expression: src, Spec: texpr.Assertion{
		Expr: e, Never: kind == "never", OnEnd: policy, MaxThreads: maxThreads, Trees: texpr.TreesViolations,
	}}, nil
}
