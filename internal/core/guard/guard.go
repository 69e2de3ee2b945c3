// SPDX-License-Identifier: Apache-2.0

// Package guard is probguard's runtime engine: a learned chain, a property
// solved once for every state, and per group the decision at each event:
// the abstract state, P_safe by one lookup, and whether to intervene.
//
// The processor and the offline commands (risk, evaluate) share it, so a
// threshold tried offline decides live exactly as it did offline.
package guard

import (
	"errors"
	"fmt"
	"math"

	"github.com/agentguard/agentguard/internal/core/dtmc"
	"github.com/agentguard/agentguard/internal/core/formula"
)

// Report says which events below the threshold are reported.
type Report string

const (
	// ReportCrossing reports the first event of a group below θ and each
	// later one that comes after an event at or above θ; and the unsafe
	// state, or a state the model never saw, when it is entered.
	ReportCrossing Report = "crossing"
	// ReportEvery reports every event below θ, in the unsafe state, or in
	// a state the model never saw.
	ReportEvery Report = "every"
)

// Unknown says what a state the model never saw does.
type Unknown string

const (
	// UnknownAlert reports it; it is never taken as safe.
	UnknownAlert Unknown = "alert"
	// UnknownPass lets it pass unreported (still counted).
	UnknownPass Unknown = "pass"
)

// Options are how a Guard decides.
type Options struct {
	Property  dtmc.Property
	Threshold float64 // intervene when P_safe < Threshold
	Report    Report
	Unknown   Unknown
	// Posterior, with Samples > 0, gives every state a credible interval of
	// its P_safe (dtmc.PSafeIntervals), carried on each decision; not for
	// the response property, whose P_safe is per monitor state.
	Posterior dtmc.PosteriorOptions
	// DecideOn is what is compared with θ: the estimate (DecideMean, the
	// default) or the interval's lower bound (DecideLowerBound: a state
	// whose data cannot rule out a P_safe below θ is below θ).
	DecideOn string
}

// The values of DecideOn.
const (
	DecideMean       = "mean"
	DecideLowerBound = "lower_bound"
)

// Validate checks the options that do not need a model.
func (o Options) Validate() error {
	var errs []error
	if !(o.Threshold > 0 && o.Threshold <= 1) {
		errs = append(errs, fmt.Errorf("threshold: want a probability in (0, 1], got %v", o.Threshold))
	}
	if o.Report != ReportCrossing && o.Report != ReportEvery {
		errs = append(errs, fmt.Errorf("report: unknown value %q: valid values are %q and %q", o.Report, ReportCrossing, ReportEvery))
	}
	if o.Unknown != UnknownAlert && o.Unknown != UnknownPass {
		errs = append(errs, fmt.Errorf("unknown_state: unknown value %q: valid values are %q and %q", o.Unknown, UnknownAlert, UnknownPass))
	}
	if err := o.Posterior.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("uncertainty: %w", err))
	}
	switch {
	case o.DecideOn != "" && o.DecideOn != DecideMean && o.DecideOn != DecideLowerBound:
		errs = append(errs, fmt.Errorf("decide_on: unknown value %q: valid values are %q and %q", o.DecideOn, DecideMean, DecideLowerBound))
	case o.DecideOn == DecideLowerBound && o.Posterior.Samples == 0:
		errs = append(errs, fmt.Errorf("decide_on: %s needs the intervals: set uncertainty.samples", DecideLowerBound))
	case o.Posterior.Samples > 0 && o.Property.Kind == dtmc.Response:
		errs = append(errs, errors.New("uncertainty: intervals are per state, and the response property's P_safe is per state and monitor state: leave uncertainty out"))
	}
	return errors.Join(errs...)
}

// Guard is a model with its property solved. It is immutable, so a
// processor can swap in a new one while groups keep their Runs.
type Guard struct {
	opts    Options
	model   *dtmc.Model
	safety  *dtmc.Safety
	mask    uint64 // the predicates' bits
	unsafe  *formula.Formula
	seen    []bool        // per state index: visited in the training data
	monitor *dtmc.Monitor // response only
	// intervals: per state index, the credible interval of P_safe (nil
	// without Options.Posterior)
	intervals []dtmc.Interval
}

// New solves the property on the model. The property's formulas and the
// unsafe formula must be over the model's predicates.
func New(model *dtmc.Model, opts Options, sv *dtmc.Solver) (*Guard, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	safety, err := model.Solve(opts.Property, sv)
	if err != nil {
		return nil, fmt.Errorf("property: %w", err)
	}
	g := &Guard{opts: opts, model: model, safety: safety, monitor: safety.Monitor()}
	n := len(model.Spec().Predicates)
	g.mask = uint64(1)<<uint(n) - 1
	if opts.Property.Unsafe != "" {
		if g.unsafe, err = model.Formula(opts.Property.Unsafe); err != nil {
			return nil, fmt.Errorf("unsafe: %w", err)
		}
	}
	g.seen = make([]bool, len(model.States()))
	for i := range g.seen {
		g.seen[i] = model.Visits(i) > 0
	}
	if opts.Posterior.Samples > 0 {
		if g.intervals, err = model.PSafeIntervals(opts.Property, sv, opts.Posterior); err != nil {
			return nil, fmt.Errorf("uncertainty: %w", err)
		}
	}
	return g, nil
}

// Interval is state i's credible interval of P_safe; false without
// Options.Posterior.
func (g *Guard) Interval(i int) (dtmc.Interval, bool) {
	if g.intervals == nil {
		return dtmc.Interval{}, false
	}
	return g.intervals[i], true
}

// Model is the guard's model.
func (g *Guard) Model() *dtmc.Model { return g.model }

// Options are the guard's options.
func (g *Guard) Options() Options { return g.opts }

// Safety is the solved property.
func (g *Guard) Safety() *dtmc.Safety { return g.safety }

// PropertyName names the property in annotations and metrics.
func (g *Guard) PropertyName() string { return string(g.opts.Property.Kind) }

// Seen reports whether state i was visited in the training data.
func (g *Guard) Seen(i int) bool { return g.seen[i] }

// Run is one group's position: the response monitor's state and whether the
// last scored event was below the threshold. The zero value is a fresh group.
type Run struct {
	q         dtmc.MonitorState
	below     bool // the last scored event was below θ
	violating bool // the last event was a violation
	unknown   bool // the last event was in a state the model never saw
}

// Decision is what a Guard decides at one event.
type Decision struct {
	State dtmc.State
	Index int  // the state's index in the model, -1 if outside its space
	Known bool // the model saw the state in training
	// Monitor is the response monitor's state after the event.
	Monitor dtmc.MonitorState
	// PSafe is the probability of staying safe from here; NaN when unknown.
	PSafe float64
	// PSafeLow and PSafeHigh are its credible interval; NaN without
	// Options.Posterior or where PSafe is unknown.
	PSafeLow, PSafeHigh float64
	Below               bool // PSafe < θ (or, deciding on the lower bound, PSafeLow < θ)
	// Violation: the unsafe state itself (or, for response, the monitor's
	// violation) is reached.
	Violation bool
	// Report: the configuration asks for this event to be reported.
	Report   bool
	Evidence dtmc.Evidence
}

// Step decides at the next event of a group whose predicates have the
// values bits. It does not allocate.
func (g *Guard) Step(r *Run, bits uint64) Decision {
	d := Decision{State: dtmc.State(bits & g.mask), Index: -1, PSafe: math.NaN(), PSafeLow: math.NaN(), PSafeHigh: math.NaN()}
	if g.monitor != nil {
		r.q = g.monitor.Next(r.q, uint64(d.State))
		d.Monitor = r.q
	}
	d.Violation = (g.unsafe != nil && g.unsafe.Eval(uint64(d.State))) || (g.monitor != nil && r.q == g.monitor.Viol())
	i, ok := g.model.Index(d.State)
	if ok {
		d.Index, d.Known = i, g.seen[i]
	}
	switch {
	case d.Violation:
		// P_safe is 0 in the unsafe state by definition, whether the model
		// holds the state or not (past 12 predicates, only those it saw).
		d.PSafe, d.Below = 0, true
	case d.Known:
		d.PSafe, d.Evidence = g.score(i, r.q)
		d.Below = d.PSafe < g.opts.Threshold
		if iv, ok := g.Interval(i); ok {
			d.PSafeLow, d.PSafeHigh = iv.Low, iv.High
			if g.opts.DecideOn == DecideLowerBound {
				d.Below = iv.Low < g.opts.Threshold
			}
		}
	}
	wasViolating, wasUnknown := r.violating, r.unknown
	r.violating, r.unknown = d.Violation, !d.Known && !d.Violation
	every := g.opts.Report == ReportEvery
	switch {
	case d.Violation:
		d.Report = every || !wasViolating
	case !d.Known:
		d.Report = g.opts.Unknown == UnknownAlert && (every || !wasUnknown)
		return d // the crossing state carries over an unknown state
	case d.Below:
		d.Report = g.opts.Report == ReportEvery || !r.below
	}
	r.below = d.Below
	return d
}

func (g *Guard) score(i int, q dtmc.MonitorState) (float64, dtmc.Evidence) {
	if g.monitor == nil {
		return g.safety.PSafe(i), g.safety.Evidence(i)
	}
	return g.safety.PSafePair(i, q), g.safety.EvidencePair(i, q)
}

// RunState is a Run's fields, for a checkpoint.
type RunState struct {
	Monitor                   dtmc.MonitorState
	Below, Violating, Unknown bool
}

// State is the run's fields.
func (r Run) State() RunState {
	return RunState{Monitor: r.q, Below: r.below, Violating: r.violating, Unknown: r.unknown}
}

// RunOf is the run with the fields s.
func RunOf(s RunState) Run {
	return Run{q: s.Monitor, below: s.Below, violating: s.Violating, unknown: s.Unknown}
}
