// SPDX-License-Identifier: Apache-2.0

package guard

import "github.com/agentguard/agentguard/internal/core/dtmc"

// Alert is one decision in the paper's fixed schema, as an agent reads it
// (the risk endpoint serves it as JSON): which group and event, the
// abstract state, P_safe against θ, whether to intervene, the rule at
// stake, the evidence and the explanation.
type Alert struct {
	Group string `json:"group"`
	Event int    `json:"event"` // 1-based, in the group's sequence order
	State string `json:"state"` // as the model file names it ("0110")
	// Holds are the predicates true in State.
	Holds []string `json:"holds"`
	// PSafe is P(stay safe) from here; nil when the model never saw the
	// state (then it is not known, and never taken as safe).
	PSafe     *float64 `json:"p_safe"`
	Threshold float64  `json:"threshold"`
	// Warning: act now. P_safe is below θ, the unsafe state is reached, or
	// the state is unknown and unknown_state is alert. It does not depend on
	// report: under crossing, every event of a risky stretch is a warning
	// here, though only its first is annotated on its span.
	Warning bool `json:"warning"`
	// Kind is safe, risk (below θ), violation or unknown_state.
	Kind        string    `json:"kind"`
	Rule        Rule      `json:"rule"`
	Evidence    *Evidence `json:"evidence"` // nil when no move leads toward unsafe
	Explanation string    `json:"explanation"`
}

// Rule is the property P_safe is computed for.
type Rule struct {
	Property string `json:"property"`
	Unsafe   string `json:"unsafe,omitempty"`
	Horizon  int    `json:"horizon,omitempty"`
	Trigger  string `json:"trigger,omitempty"`
	Response string `json:"response,omitempty"`
	Within   int    `json:"within,omitempty"`
}

// Evidence is the most likely way to unsafe from the state: the next state
// and the probability of moving there.
type Evidence struct {
	NextState   string  `json:"next_state"`
	Move        string  `json:"move"` // what changes, in words
	Probability float64 `json:"probability"`
}

// The kinds of an alert.
const (
	KindSafe      = "safe"
	KindRisk      = "risk"
	KindViolation = "violation"
	KindUnknown   = "unknown_state"
)

// Alert renders a decision taken at event number event of group. It reads
// only the guard, which never changes, so it may run on another goroutine
// than the one that decided.
func (g *Guard) Alert(d Decision, group string, event int) Alert {
	p := g.opts.Property
	a := Alert{
		Group: group, Event: event, State: g.StateName(d.State), Holds: g.HoldingPredicates(d.State),
		Threshold: g.opts.Threshold, Explanation: g.Explain(d),
		Rule: Rule{Property: string(p.Kind), Unsafe: p.Unsafe, Trigger: p.Trigger, Response: p.Response},
	}
	switch p.Kind {
	case dtmc.Bounded:
		a.Rule.Horizon = p.Horizon
	case dtmc.Response:
		a.Rule.Within = p.Within
	}
	if a.Holds == nil {
		a.Holds = []string{}
	}
	switch {
	case d.Violation:
		a.Kind, a.Warning = KindViolation, true
	case !d.Known:
		a.Kind, a.Warning = KindUnknown, g.opts.Unknown == UnknownAlert
	case d.Below:
		a.Kind, a.Warning = KindRisk, true
	default:
		a.Kind = KindSafe
	}
	if d.Violation || d.Known {
		ps := d.PSafe
		a.PSafe = &ps
	}
	if d.Evidence.Risk > 0 {
		a.Evidence = &Evidence{
			NextState:   g.StateName(g.model.States()[d.Evidence.State]),
			Move:        g.DescribeMove(d.State, d.Evidence),
			Probability: d.Evidence.Prob,
		}
	}
	return a
}
