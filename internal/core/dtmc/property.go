// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"fmt"
)

// Kind names a property.
type Kind string

// The properties of spec §4.
const (
	AlwaysSafe Kind = "always_safe" // P_safe = 1 − P(F unsafe)
	Bounded    Kind = "bounded"     // P_safe = 1 − P(F≤k unsafe)
	Response   Kind = "response"    // P_safe = P(G ¬viol) on the monitor product
)

// Property is what P_safe is the probability of.
type Property struct {
	Kind Kind
	// Unsafe is the formula of always_safe and bounded.
	Unsafe string
	// Horizon is bounded's k.
	Horizon int
	// Trigger and Response are response's formulas, Within its K.
	Trigger, Response string
	Within            int
}

// Safety holds P_safe for every state of a solved property: after solving,
// a lookup is one array read.
type Safety struct {
	chain   *Chain // the model's chain, or the monitor product for response
	psafe   []float64
	monitor *Monitor // nil but for response
	trigger []bool   // response: labels of the base chain
	respond []bool
	result  Result
}

// Solve computes P_safe of the property for every state.
func (m *Model) Solve(p Property, sv *Solver) (*Safety, error) {
	label := func(field, src string) ([]bool, error) {
		if src == "" {
			return nil, fmt.Errorf("%s property: %s is required", p.Kind, field)
		}
		f, err := m.Formula(src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		return m.Label(f), nil
	}
	switch p.Kind {
	case AlwaysSafe, Bounded:
		unsafe, err := label("unsafe", p.Unsafe)
		if err != nil {
			return nil, err
		}
		if p.Kind == AlwaysSafe {
			return SolveAlwaysSafe(m.chain, unsafe, sv)
		}
		return SolveBounded(m.chain, unsafe, p.Horizon, sv)
	case Response:
		trig, err := label("trigger", p.Trigger)
		if err != nil {
			return nil, err
		}
		resp, err := label("response", p.Response)
		if err != nil {
			return nil, err
		}
		tf, _ := m.Formula(p.Trigger)
		rf, _ := m.Formula(p.Response)
		mon, err := NewMonitor(tf, rf, p.Within)
		if err != nil {
			return nil, err
		}
		return SolveResponse(m.chain, mon, trig, resp, sv)
	}
	return nil, fmt.Errorf("property kind %q: valid kinds are %q, %q and %q", p.Kind, AlwaysSafe, Bounded, Response)
}

// SolveAlwaysSafe computes P_safe(s) = 1 − P_s(F unsafe) for every state.
func SolveAlwaysSafe(c *Chain, unsafe []bool, sv *Solver) (*Safety, error) {
	p := make([]float64, c.NumStates())
	res, err := sv.Reach(c, unsafe, p)
	if err != nil {
		return nil, err
	}
	return newSafety(c, p, res), nil
}

// SolveBounded computes P_safe(s) = 1 − P_s(F≤k unsafe) for every state.
func SolveBounded(c *Chain, unsafe []bool, k int, sv *Solver) (*Safety, error) {
	p := make([]float64, c.NumStates())
	res, err := sv.BoundedReach(c, unsafe, k, p)
	if err != nil {
		return nil, err
	}
	return newSafety(c, p, res), nil
}

// SolveResponse computes P_safe = P(G ¬viol) for every (state, monitor state)
// pair of the product of c with the monitor; trigger and response label c's
// states.
func SolveResponse(c *Chain, mon *Monitor, trigger, response []bool, sv *Solver) (*Safety, error) {
	if len(trigger) != c.NumStates() || len(response) != c.NumStates() {
		return nil, fmt.Errorf("labels of %d and %d states for a chain of %d", len(trigger), len(response), c.NumStates())
	}
	pc, viol, err := mon.product(c, trigger, response)
	if err != nil {
		return nil, err
	}
	sf, err := SolveAlwaysSafe(pc, viol, sv)
	if err != nil {
		return nil, err
	}
	sf.monitor, sf.trigger, sf.respond = mon, trigger, response
	return sf, nil
}

func newSafety(c *Chain, reach []float64, res Result) *Safety {
	for i, v := range reach {
		reach[i] = 1 - v
	}
	return &Safety{chain: c, psafe: reach, result: res}
}

// Result describes the solve.
func (sf *Safety) Result() Result { return sf.result }

// PSafe is P_safe of a chain state. For response it is the value at the
// pair the monitor reaches entering s from Idle, that is, starting fresh at s.
func (sf *Safety) PSafe(state int) float64 {
	if sf.monitor == nil {
		return sf.psafe[state]
	}
	return sf.PSafePair(state, sf.monitor.step(Idle, sf.trigger[state], sf.respond[state]))
}

// PSafePair is P_safe of a (chain state, monitor state) pair (response only).
func (sf *Safety) PSafePair(state int, q MonitorState) float64 {
	return sf.psafe[state*sf.monitor.NumStates()+int(q)]
}

// Monitor is the response monitor, nil for the other properties.
func (sf *Safety) Monitor() *Monitor { return sf.monitor }

// Evidence is the successor that contributes most to a state's risk.
type Evidence struct {
	State   int          // the successor t
	Monitor MonitorState // its monitor state (response only)
	Prob    float64      // P(t | s)
	Risk    float64      // P(t | s)·(1 − P_safe(t))
}

// Evidence returns the successor t of s maximizing P(t|s)·(1 − P_safe(t))
// (spec §5); ties go to the lowest index.
func (sf *Safety) Evidence(state int) Evidence {
	if sf.monitor == nil {
		return sf.evidence(state)
	}
	return sf.EvidencePair(state, sf.monitor.step(Idle, sf.trigger[state], sf.respond[state]))
}

// EvidencePair is Evidence for a (chain state, monitor state) pair.
func (sf *Safety) EvidencePair(state int, q MonitorState) Evidence {
	nq := sf.monitor.NumStates()
	e := sf.evidence(state*nq + int(q))
	e.State, e.Monitor = e.State/nq, MonitorState(e.State%nq)
	return e
}

func (sf *Safety) evidence(i int) Evidence {
	cols, probs := sf.chain.Row(i)
	best := Evidence{State: int(cols[0]), Prob: probs[0], Risk: -1}
	for k, t := range cols {
		if r := probs[k] * (1 - sf.psafe[t]); r > best.Risk {
			best = Evidence{State: int(t), Prob: probs[k], Risk: r}
		}
	}
	return best
}
