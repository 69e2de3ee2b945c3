// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/formula"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/stage"
)

// Config of the probguard processor.
type Config struct {
	// Predicates (the abstraction: predicate i is bit i of the state) and the
	// events condition, with temporalcheck's syntax, latched ones included.
	predicate.Config `mapstructure:",squash"`
	// The holding stage's fields (group_by, wait, root_wait, group_timeout,
	// max_traces, max_spans_per_trace, workers, storage, checkpoint_interval,
	// warm_up, warn_unheld_after), with this processor's defaults below.
	// With score: on_arrival, only traces whose group is not known yet wait;
	// a group that ends (group_timeout) ends its run: learning counts the
	// move to end.
	stage.Settings `mapstructure:",squash"`
	// ValidTransitions are the domain rules learning respects (max_changes,
	// irreversible, forbidden, absorbing, valid_states).
	ValidTransitions dtmc.Rules `mapstructure:"valid_transitions"`
	// Smoothing is how learning (agentguard learn, and learn below) estimates
	// probabilities: laplace (default, alpha 1) or frequency.
	Smoothing dtmc.Smoothing `mapstructure:"smoothing"`
	// Unsafe is a formula over the predicates: the states to stay out of.
	Unsafe string `mapstructure:"unsafe"`
	// Property: always_safe (default), {bounded: {horizon: k}} or
	// {response: {trigger, response, within}}.
	Property Property `mapstructure:"property"`
	// Model is the JSON model file learned with agentguard learn, over the
	// same predicates and valid_transitions. Without it (learn set) the
	// processor only learns.
	Model string `mapstructure:"model"`
	// Threshold θ: an event whose P(stay safe) is below it is reported.
	Threshold float64 `mapstructure:"threshold"`
	// Report: crossing (default) or every.
	Report guard.Report `mapstructure:"report"`
	// UnknownState: alert (default) or pass, for a state the model never saw.
	UnknownState guard.Unknown `mapstructure:"unknown_state"`
	// Uncertainty, with samples > 0, gives each state a credible interval
	// of its P_safe from the posterior of the model's counts, carried on
	// every warning (agentguard.p_safe_low, agentguard.p_safe_high).
	Uncertainty Uncertainty `mapstructure:"uncertainty"`
	// DecideOn: mean (default) compares P_safe with θ; lower_bound, the
	// interval's lower bound (needs uncertainty).
	DecideOn string `mapstructure:"decide_on"`
	// Learn also learns from the live traffic.
	Learn *LearnConfig `mapstructure:"learn"`
	// RiskEndpoint is the component ID of a riskendpoint extension (listed
	// in service::extensions) that each decision is published to, so that
	// agents can ask for their group's latest one. Unset: none.
	RiskEndpoint *component.ID `mapstructure:"risk_endpoint"`
	// Enforce is what an action asked about at the risk endpoint means when
	// the state it leads to is a risk, the unsafe state, or (unknown_state:
	// alert) a state the model never saw: deny, warn (default) or off.
	Enforce string `mapstructure:"enforce"`

	// Score: on_arrival (default) scores each batch of spans as it arrives,
	// once its trace's group is known; when_complete holds each trace until
	// wait or root_wait says it is complete.
	Score Score `mapstructure:"score"`
}

// Score says when spans are scored.
type Score string

const (
	// ScoreOnArrival scores an event as soon as its batch arrives: exact
	// when the events of a group do not overlap in time (an agent calling
	// one tool after another) and its spans are exported in the order they
	// end, as the SDKs' batch span processors do. An event exported after a
	// later-starting one was scored is counted and scored as the
	// continuation.
	ScoreOnArrival Score = "on_arrival"
	// ScoreWhenComplete holds each trace until it is complete (wait,
	// root_wait), so that overlapping events exported in different batches
	// of one trace are scored in start order.
	ScoreWhenComplete Score = "when_complete"
)

// LearnConfig is online learning.
type LearnConfig struct {
	// Output is the model file written (atomically) from the live traffic's
	// counts alone, so that the files of several collectors merge with
	// agentguard learn --merge.
	Output string `mapstructure:"output"`
	// Every is how often it is written (0: the default, 1m), and once at
	// shutdown.
	Every time.Duration `mapstructure:"every"`
	// Serve: the served model becomes model's counts plus the live counts at
	// every write. Default false: the served model never changes.
	Serve bool `mapstructure:"serve"`
}

func (l *LearnConfig) validate(model string) error {
	var errs []error
	switch {
	case l.Output == "":
		errs = append(errs, errors.New("learn.output: required"))
	case model != "" && filepath.Clean(l.Output) == filepath.Clean(model):
		errs = append(errs, fmt.Errorf("learn.output: %s is also model: the live counts alone would replace the model's at the next start; write them elsewhere and merge with agentguard learn --merge", l.Output))
	}
	if l.Serve && model == "" {
		errs = append(errs, errors.New("learn.serve: needs model, the counts the live ones are added to; without model probguard only learns"))
	}
	errs = append(errs, stage.NonNegativeDuration("learn.every", l.Every))
	return errors.Join(errs...)
}

// interval is how often the learned model is written.
func (l *LearnConfig) interval() time.Duration {
	if l.Every == 0 {
		return time.Minute
	}
	return l.Every
}

func createDefaultConfig() *Config {
	return &Config{
		Settings: stage.Settings{
			GroupBy:            sequence.ByTraceID,
			Wait:               2 * time.Second,
			RootWait:           500 * time.Millisecond,
			GroupTimeout:       time.Minute,
			MaxTraces:          100_000,
			MaxSpansPerTrace:   10_000,
			WarnUnheldAfter:    1000,
			CheckpointInterval: 10 * time.Second,
		},
		Enforce:      assertion.EnforceWarn,
		Score:        ScoreOnArrival,
		Property:     Property{Kind: dtmc.AlwaysSafe},
		Threshold:    0.7,
		Report:       guard.ReportCrossing,
		UnknownState: guard.UnknownAlert,
	}
}

// Validate checks the configuration alone: it reads no file. The model file
// and learn.output's counts are read and checked against it once, when the
// processor is created (loadServed, newOnlineLearner), as the OTTL is
// compiled then.
func (c *Config) Validate() error {
	errs := []error{c.ValidateAbstraction()}
	if c.Model == "" && c.Learn == nil {
		errs = append(errs, errors.New("model: required (a file learned with agentguard learn), unless learn is set"))
	}
	return errors.Join(errs...)
}

// ValidateAbstraction checks everything but the model file: what learning a
// model for this configuration needs.
func (c *Config) ValidateAbstraction() error {
	return errors.Join(c.validateShape(), c.GuardOptions().Validate(), c.validateFormulas())
}

func (c *Config) validateShape() error {
	var errs []error
	if len(c.Predicates) == 0 {
		errs = append(errs, errors.New("predicates: at least one predicate is required"))
	}
	if len(c.Predicates) > dtmc.MaxPredicates {
		errs = append(errs, fmt.Errorf("predicates: %d declared, at most %d", len(c.Predicates), dtmc.MaxPredicates))
	}
	if !slices.Contains([]string{assertion.EnforceDeny, assertion.EnforceWarn, assertion.EnforceOff}, c.Enforce) {
		errs = append(errs, fmt.Errorf("enforce: unknown value %q: valid values are %q, %q and %q", c.Enforce, assertion.EnforceDeny, assertion.EnforceWarn, assertion.EnforceOff))
	}
	if c.Score != ScoreOnArrival && c.Score != ScoreWhenComplete {
		errs = append(errs, fmt.Errorf("score: unknown value %q: valid values are %q and %q", c.Score, ScoreOnArrival, ScoreWhenComplete))
	}
	if c.Learn != nil {
		errs = append(errs, c.Learn.validate(c.Model))
	}
	errs = append(errs, c.Settings.Check())
	return errors.Join(errs...)
}

// validateFormulas parses unsafe and the property's formulas over the
// predicates, and compiles the rules.
func (c *Config) validateFormulas() error {
	names := c.predicateNames()
	var errs []error
	if err := c.Property.validate(); err != nil {
		errs = append(errs, err)
	}
	check := func(field, src string) {
		if _, err := formula.Parse(src, names); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
	}
	if c.Unsafe == "" && c.Property.Kind != dtmc.Response {
		errs = append(errs, fmt.Errorf("unsafe: required by property %s", c.Property.Kind))
	} else if c.Unsafe != "" {
		check("unsafe", c.Unsafe)
	}
	if c.Property.Kind == dtmc.Response {
		check("property response: trigger", c.Property.Trigger)
		check("property response: response", c.Property.Response)
	}
	rulesOnly := c.Spec()
	rulesOnly.Unsafe = "" // reported above
	if _, err := dtmc.CompileSpec(rulesOnly); err != nil && len(names) <= dtmc.MaxPredicates {
		errs = append(errs, fmt.Errorf("valid_transitions: %w", err))
	}
	return errors.Join(errs...)
}

func (c *Config) predicateNames() []string {
	names := make([]string, len(c.Predicates))
	for i, p := range c.Predicates {
		names[i] = p.Name
	}
	return names
}

// Spec is what models are learned under: agentguard learn and learn use it,
// and a model file must match it.
func (c *Config) Spec() dtmc.Spec {
	return dtmc.Spec{Predicates: c.predicateNames(), Smoothing: c.Smoothing, Rules: c.ValidTransitions, Unsafe: c.Unsafe}
}

// Uncertainty is how the credible intervals of P_safe are estimated.
type Uncertainty struct {
	// Samples is the number of chains drawn from the posterior; 0 (the
	// default): no intervals.
	Samples int `mapstructure:"samples"`
	// Level is the intervals' probability (default 0.9).
	Level float64 `mapstructure:"level"`
}

// GuardOptions are how events are decided.
func (c *Config) GuardOptions() guard.Options {
	return guard.Options{Property: c.Property.solved(c.Unsafe), Threshold: c.Threshold, Report: c.Report, Unknown: c.UnknownState,
		Posterior: dtmc.PosteriorOptions{Samples: c.Uncertainty.Samples, Level: c.Uncertainty.Level}, DecideOn: c.DecideOn}
}

// Matches reports how a model's abstraction differs from the config's: the
// predicates, in order, and the rules must be the same.
func (c *Config) Matches(m *dtmc.Model, name string) error {
	got, want := m.Spec(), c.Spec()
	if !slices.Equal(got.Predicates, want.Predicates) {
		return fmt.Errorf("model %s: learned over the predicates %v, but the configuration declares %v: learn it again with agentguard learn --config", name, got.Predicates, want.Predicates)
	}
	if !sameSmoothing(got.Smoothing, want.Smoothing) {
		return fmt.Errorf("model %s: learned with smoothing %+v, but the configuration says %+v", name, got.Smoothing, want.Smoothing)
	}
	if !rulesEqual(got.Rules, want.Rules) {
		return fmt.Errorf("model %s: learned under valid_transitions %+v, but the configuration says %+v", name, got.Rules, want.Rules)
	}
	return nil
}

// sameSmoothing compares smoothings with their defaults filled in (laplace,
// alpha 1), as a model file has them.
func sameSmoothing(a, b dtmc.Smoothing) bool {
	fill := func(s dtmc.Smoothing) dtmc.Smoothing {
		if s.Mode == "" {
			s.Mode = dtmc.Laplace
		}
		if s.Mode == dtmc.Laplace && s.Alpha == 0 {
			s.Alpha = 1
		}
		return s
	}
	return fill(a) == fill(b)
}

func rulesEqual(a, b dtmc.Rules) bool {
	return a.MaxChanges == b.MaxChanges && a.Absorbing == b.Absorbing && a.ValidStates == b.ValidStates &&
		slices.Equal(a.Irreversible, b.Irreversible) && slices.Equal(a.Forbidden, b.Forbidden)
}
