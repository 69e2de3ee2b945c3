// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"fmt"
	"math"
	"sort"

	"github.com/agentguard/agentguard/internal/core/formula"
)

// SmoothingMode is how probabilities are estimated from counts.
type SmoothingMode string

// The smoothing modes.
const (
	// Laplace: P(t|s) = (n_st + α)/(n_s + k_s·α) over the k_s valid successors.
	Laplace SmoothingMode = "laplace"
	// Frequency: P(t|s) = n_st/n_s; a state never left becomes absorbing.
	Frequency SmoothingMode = "frequency"
)

// Smoothing configures estimation. The zero value is Laplace with α = 1.
type Smoothing struct {
	Mode  SmoothingMode `json:"mode" mapstructure:"mode"`
	Alpha float64       `json:"alpha,omitempty" mapstructure:"alpha"` // Laplace only; default 1
}

func (s Smoothing) withDefaults() (Smoothing, error) {
	switch s.Mode {
	case "":
		s.Mode = Laplace
	case Laplace, Frequency:
	default:
		return s, fmt.Errorf("smoothing.mode %q: valid values are %q and %q", s.Mode, Laplace, Frequency)
	}
	if s.Mode == Frequency {
		if s.Alpha != 0 {
			return s, fmt.Errorf("smoothing.alpha %v: frequency estimation takes no alpha", s.Alpha)
		}
		return s, nil
	}
	if s.Alpha == 0 {
		s.Alpha = 1
	}
	if !(s.Alpha > 0) || math.IsInf(s.Alpha, 0) {
		return s, fmt.Errorf("smoothing.alpha %v: want a finite number > 0", s.Alpha)
	}
	return s, nil
}

// Spec is what a model is learned under.
type Spec struct {
	Predicates []string
	Smoothing  Smoothing
	Rules      Rules
	// Unsafe is the formula of the always_safe property the model is meant
	// for (optional); the PAC report and the exported labels use it.
	Unsafe string
}

// FullSpaceMax is the most predicates for which the state space is every
// valid valuation (2^12 = 4096); above it, the observed states.
const FullSpaceMax = 12

// Model is a chain learned from counts: its states (valuations in name order,
// End last), the counts, and the chain of probabilities they give.
type Model struct {
	spec   Spec
	states []State
	index  map[State]int
	counts *Counts
	valid  *validity
	unsafe *formula.Formula

	chain     *Chain
	successes []int    // k_s: the number of valid successors of each state
	visits    []uint64 // n_s: the counted transitions out of each state
	fixed     []bool   // the row is known without data: End and absorbing states
	notes     []string // what learning decided that a person should know
}

// Learn builds the model of the counts. The state space is every valuation
// allowed by valid_states when there are at most FullSpaceMax predicates,
// else the observed states; plus End. Counts on a transition the rules forbid
// are an error: the data contradict the rules.
func Learn(spec Spec, counts *Counts) (*Model, error) {
	m, err := newModel(spec, counts)
	if err != nil {
		return nil, err
	}
	var states []State
	if len(spec.Predicates) <= FullSpaceMax {
		for v := range State(1) << uint(len(spec.Predicates)) {
			if m.valid.stateOK(v) {
				states = append(states, v)
			}
		}
	} else {
		for s := range counts.observed() {
			if s != End {
				states = append(states, s)
			}
		}
	}
	return m.finish(append(states, End))
}

// NewModel builds the model of counts over an explicit state space, as a
// model file lists it; End is added if missing.
func NewModel(spec Spec, states []State, counts *Counts) (*Model, error) {
	m, err := newModel(spec, counts)
	if err != nil {
		return nil, err
	}
	seen := map[State]bool{}
	for _, s := range states {
		if seen[s] {
			return nil, fmt.Errorf("state %s listed twice", s.Name(len(spec.Predicates)))
		}
		seen[s] = true
	}
	if !seen[End] {
		states = append(states, End)
	}
	return m.finish(states)
}

func newModel(spec Spec, counts *Counts) (*Model, error) {
	if len(spec.Predicates) > MaxPredicates {
		return nil, fmt.Errorf("%d predicates: at most %d", len(spec.Predicates), MaxPredicates)
	}
	for i, p := range spec.Predicates {
		if p == "" || indexOf(spec.Predicates[:i], p) >= 0 {
			return nil, fmt.Errorf("predicates[%d] %q: empty or repeated", i, p)
		}
	}
	var err error
	if spec.Smoothing, err = spec.Smoothing.withDefaults(); err != nil {
		return nil, err
	}
	m := &Model{spec: spec, counts: counts}
	if m.valid, err = spec.Rules.compile(spec.Predicates); err != nil {
		return nil, err
	}
	if m.unsafe, err = optionalFormula(spec.Unsafe, spec.Predicates); err != nil {
		return nil, fmt.Errorf("unsafe: %w", err)
	}
	return m, nil
}

// finish orders the states, checks the counts against them and the rules,
// and builds the chain.
func (m *Model) finish(states []State) (*Model, error) {
	n := len(m.spec.Predicates)
	sort.Slice(states, func(i, j int) bool { return lessByName(states[i], states[j]) })
	m.states, m.index = states, make(map[State]int, len(states))
	for i, s := range states {
		if s != End && (s>>uint(n) != 0 || !m.valid.stateOK(s)) {
			return nil, fmt.Errorf("state %s: not a valid state over %d predicates", s.Name(max(n, 64)), n)
		}
		m.index[s] = i
	}
	if err := m.checkCounts(); err != nil {
		return nil, err
	}
	m.visits = make([]uint64, len(states))
	for _, pc := range m.counts.Pairs() {
		m.visits[m.index[pc.From]] += pc.N
	}
	rows := make([][]Transition, len(states))
	m.successes = make([]int, len(states))
	m.fixed = make([]bool, len(states))
	for i := range states {
		rows[i] = m.row(i)
	}
	var err error
	m.chain, err = FromRows(rows)
	if err != nil {
		return nil, fmt.Errorf("internal error: learned rows: %w", err)
	}
	return m, nil
}

func (m *Model) checkCounts() error {
	n := len(m.spec.Predicates)
	for _, pc := range m.counts.Pairs() {
		for _, s := range []State{pc.From, pc.To} {
			if _, ok := m.index[s]; !ok {
				return fmt.Errorf("counts %s → %s: unknown state %s", pc.From.Name(n), pc.To.Name(n), s.Name(n))
			}
		}
		if pc.From == End {
			return fmt.Errorf("counts %s → %s: nothing leaves end", pc.From.Name(n), pc.To.Name(n))
		}
		if why := m.valid.move(pc.From, pc.To); why != "" && !m.valid.isAbsorbing(pc.From) {
			return fmt.Errorf("counts %s → %s (%d): an invalid transition: %s", pc.From.Name(n), pc.To.Name(n), pc.N, why)
		}
	}
	for s := range m.counts.starts {
		if _, ok := m.index[s]; !ok || s == End {
			return fmt.Errorf("starts: unknown state %s", s.Name(n))
		}
	}
	return nil
}

// row estimates the transitions of state i. Counts out of an absorbing state
// (the trace ending there, for instance) say nothing about its row, which is
// fixed.
func (m *Model) row(i int) []Transition {
	s := m.states[i]
	if m.valid.isAbsorbing(s) {
		m.successes[i], m.fixed[i] = 1, true
		return []Transition{{i, 1}}
	}
	var succ []int
	for j, t := range m.states {
		if m.valid.allowed(s, t) {
			succ = append(succ, j)
		}
	}
	// checkCounts made sure every count out of s is on a valid move.
	total := float64(m.visits[i])
	m.successes[i] = len(succ)
	if m.spec.Smoothing.Mode == Frequency {
		return m.frequencyRow(i, succ, total)
	}
	alpha := m.spec.Smoothing.Alpha
	denom := total + float64(len(succ))*alpha
	row := make([]Transition, len(succ))
	for k, j := range succ {
		row[k] = Transition{j, (float64(m.counts.Pair(s, m.states[j])) + alpha) / denom}
	}
	return row
}

func (m *Model) frequencyRow(i int, succ []int, total float64) []Transition {
	s := m.states[i]
	if total == 0 {
		m.notes = append(m.notes, fmt.Sprintf("state %s was never left: made absorbing (frequency estimation has no row for it)", s.Name(len(m.spec.Predicates))))
		return []Transition{{i, 1}}
	}
	var row []Transition
	for _, j := range succ {
		if n := m.counts.Pair(s, m.states[j]); n > 0 {
			row = append(row, Transition{j, float64(n) / total})
		}
	}
	return row
}

// Spec is what the model was learned under, defaults filled in.
func (m *Model) Spec() Spec { return m.spec }

// Chain is the learned chain; state i is States()[i].
func (m *Model) Chain() *Chain { return m.chain }

// States lists the state space in index order.
func (m *Model) States() []State { return m.states }

// Counts is the table the model was learned from.
func (m *Model) Counts() *Counts { return m.counts }

// Index is the index of a state, false if it is not in the state space (a
// state the model never saw: the runtime reports it as unknown).
func (m *Model) Index(s State) (int, bool) {
	i, ok := m.index[s]
	return i, ok
}

// StateName is the name of state i.
func (m *Model) StateName(i int) string { return m.states[i].Name(len(m.spec.Predicates)) }

// ValidSuccessors is k_s, the number of valid successors of state i.
func (m *Model) ValidSuccessors(i int) int { return m.successes[i] }

// Visits is n_s, the number of counted transitions out of state i.
func (m *Model) Visits(i int) uint64 { return m.visits[i] }

// Learned reports whether state i's row comes from data (not End or an
// absorbing state).
func (m *Model) Learned(i int) bool { return !m.fixed[i] }

// Notes lists what learning decided that a person should know, such as
// states made absorbing, and warnings about the chain.
func (m *Model) Notes() []string {
	return append(append([]string(nil), m.notes...), m.chain.Warnings()...)
}

// Label evaluates a formula on every state; End satisfies none.
func (m *Model) Label(f *formula.Formula) []bool {
	out := make([]bool, len(m.states))
	for i, s := range m.states {
		out[i] = s != End && f.Eval(uint64(s))
	}
	return out
}

// Formula parses a formula over the model's predicates.
func (m *Model) Formula(src string) (*formula.Formula, error) {
	return formula.Parse(src, m.spec.Predicates)
}

// Unsafe is the model's unsafe formula, nil if it has none.
func (m *Model) Unsafe() *formula.Formula { return m.unsafe }
