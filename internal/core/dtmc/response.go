// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"fmt"

	"github.com/agentguard/agentguard/internal/core/formula"
)

// MonitorState is the state of the response monitor for
// G(trigger ⇒ F[0,K] response): Idle, Wait(i) for i = K..1, or Viol.
type MonitorState int

// Idle is the monitor with no pending obligation.
const Idle MonitorState = 0

// Monitor tracks G(trigger ⇒ F[0,K] response) (spec §4): from Idle a state
// satisfying trigger ∧ ¬response starts Wait(K); a state satisfying response
// returns to Idle; otherwise Wait(i) goes to Wait(i−1), and Wait(0) is Viol,
// which is absorbing. States of the product are (s, q) with q already updated
// by s's label, so the response may come at any of the K steps after the
// trigger. The end state satisfies neither formula: a trace that ends while
// waiting violates the property.
type Monitor struct {
	k                 int
	trigger, response *formula.Formula
}

// NewMonitor returns the monitor for the formulas and deadline K ≥ 0.
func NewMonitor(trigger, response *formula.Formula, k int) (*Monitor, error) {
	if k < 0 {
		return nil, fmt.Errorf("response deadline %d: want K ≥ 0", k)
	}
	return &Monitor{k: k, trigger: trigger, response: response}, nil
}

// NumStates is K + 2: Idle, Wait(1..K), Viol.
func (m *Monitor) NumStates() int { return m.k + 2 }

// Viol is the violation state.
func (m *Monitor) Viol() MonitorState { return MonitorState(m.k + 1) }

// Next is the monitor state after an event whose predicates have the values
// bits; a runtime calls it at every event, starting from Idle.
func (m *Monitor) Next(q MonitorState, bits uint64) MonitorState {
	return m.step(q, m.trigger.Eval(bits), m.response.Eval(bits))
}

func (m *Monitor) step(q MonitorState, trigger, response bool) MonitorState {
	switch {
	case q == m.Viol():
		return q
	case response:
		return Idle
	case q == Idle && !trigger:
		return Idle
	case q == Idle:
		q = MonitorState(m.k + 1) // Wait(K), written as one more than K and counted down below
	}
	// From Wait(i) to Wait(i−1); Wait(0) is Viol.
	if q--; q == Idle {
		return m.Viol()
	}
	return q
}

// String names a monitor state.
func (m *Monitor) String(q MonitorState) string {
	switch q {
	case Idle:
		return "idle"
	case m.Viol():
		return "viol"
	}
	return fmt.Sprintf("wait%d", int(q))
}

// product builds the chain of (s, q) pairs, index s·(K+2) + q: a step goes
// (s, q) → (t, δ(q, L(t))) with P(t | s). Every pair is built, consistent with
// a label or not, so any pair a runtime holds can be looked up.
func (m *Monitor) product(c *Chain, trigger, response []bool) (*Chain, []bool, error) {
	nq := m.NumStates()
	n := c.NumStates() * nq
	rowStart := make([]int, n+1)
	col := make([]int32, 0, c.NumTransitions()*nq)
	prob := make([]float64, 0, c.NumTransitions()*nq)
	viol := make([]bool, n)
	for s := range c.NumStates() {
		cols, probs := c.Row(s)
		for q := range MonitorState(nq) {
			i := s*nq + int(q)
			viol[i] = q == m.Viol()
			for k, t := range cols {
				next := m.step(q, trigger[t], response[t])
				col = append(col, int32(int(t)*nq+int(next)))
				prob = append(prob, probs[k])
			}
			rowStart[i+1] = len(col)
		}
	}
	pc, err := NewChain(rowStart, col, prob)
	return pc, viol, err
}
