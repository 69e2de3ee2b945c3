// SPDX-License-Identifier: Apache-2.0

package dtmc

import (
	"fmt"

	"github.com/agentguard/agentguard/internal/core/formula"
)

// Rules say which moves can happen at all (spec §1). s → s and s → end are
// always valid, except out of an absorbing state, whose only move is s → s.
type Rules struct {
	// MaxChanges is the most predicates that change in one step; 0 means no
	// limit (the paper's household domain uses 1).
	MaxChanges int `json:"max_changes,omitempty" mapstructure:"max_changes"`
	// Irreversible predicates never turn back: once true they stay true
	// (broken, sliced).
	Irreversible []string `json:"irreversible,omitempty" mapstructure:"irreversible"`
	// Forbidden lists transitions that cannot happen, as [from, to] state
	// names.
	Forbidden [][2]string `json:"forbidden,omitempty" mapstructure:"forbidden"`
	// Absorbing is a formula; the states satisfying it never leave.
	Absorbing string `json:"absorbing,omitempty" mapstructure:"absorbing"`
	// ValidStates is a formula; only states satisfying it can occur.
	// Empty means every valuation.
	ValidStates string `json:"valid_states,omitempty" mapstructure:"valid_states"`
}

// Validity is a spec checked as learning checks it (predicates, smoothing,
// rules, unsafe) and its rules compiled, without learning a model: which
// states can occur and which moves are valid. Building it does not visit
// the state space.
type Validity struct {
	n     int
	valid *validity
}

// CompileSpec checks spec and compiles its rules.
func CompileSpec(spec Spec) (*Validity, error) {
	m, err := newModel(spec, NewCounts())
	if err != nil {
		return nil, err
	}
	return &Validity{n: len(spec.Predicates), valid: m.valid}, nil
}

// Disallowed says why the state space or the rules exclude the move
// from → to, or "" if they allow it: a learner of live traffic skips such a
// pair (and counts it) where learning would reject the whole table.
func (v *Validity) Disallowed(from, to State) string {
	switch {
	case from == End:
		return "nothing leaves end"
	case !v.valid.stateOK(from):
		return fmt.Sprintf("%s violates valid_states", from.Name(v.n))
	case v.valid.isAbsorbing(from):
		// Counted, and ignored (an absorbing row is fixed), if the state
		// moved to can occur at all.
		if to != End && !v.valid.stateOK(to) {
			return fmt.Sprintf("%s violates valid_states", to.Name(v.n))
		}
		return ""
	}
	return v.valid.move(from, to)
}

// validity is Rules compiled against the predicates.
type validity struct {
	n            int
	maxChanges   int
	irreversible uint64
	forbidden    map[[2]State]bool
	absorbing    *formula.Formula
	validStates  *formula.Formula
}

func (r Rules) compile(predicates []string) (*validity, error) {
	v := &validity{n: len(predicates), maxChanges: r.MaxChanges, forbidden: map[[2]State]bool{}}
	if r.MaxChanges < 0 {
		return nil, fmt.Errorf("rules.max_changes %d: want 0 (no limit) or more", r.MaxChanges)
	}
	for _, name := range r.Irreversible {
		i := indexOf(predicates, name)
		if i < 0 {
			return nil, fmt.Errorf("rules.irreversible: unknown predicate %q; declared: %v", name, predicates)
		}
		v.irreversible |= 1 << uint(i)
	}
	for k, pair := range r.Forbidden {
		from, err := ParseState(pair[0], v.n)
		if err != nil {
			return nil, fmt.Errorf("rules.forbidden[%d]: %w", k, err)
		}
		to, err := ParseState(pair[1], v.n)
		if err != nil {
			return nil, fmt.Errorf("rules.forbidden[%d]: %w", k, err)
		}
		v.forbidden[[2]State{from, to}] = true
	}
	var err error
	if v.absorbing, err = optionalFormula(r.Absorbing, predicates); err != nil {
		return nil, fmt.Errorf("rules.absorbing: %w", err)
	}
	if v.validStates, err = optionalFormula(r.ValidStates, predicates); err != nil {
		return nil, fmt.Errorf("rules.valid_states: %w", err)
	}
	return v, nil
}

func optionalFormula(src string, predicates []string) (*formula.Formula, error) {
	if src == "" {
		return nil, nil
	}
	return formula.Parse(src, predicates)
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// stateOK reports whether s may occur.
func (v *validity) stateOK(s State) bool {
	return s == End || v.validStates == nil || v.validStates.Eval(uint64(s))
}

// isAbsorbing reports whether s never leaves.
func (v *validity) isAbsorbing(s State) bool {
	return s == End || (v.absorbing != nil && v.absorbing.Eval(uint64(s)))
}

// allowed reports whether s → t is valid: move without the message, for
// the loops over every pair of states.
func (v *validity) allowed(s, t State) bool {
	switch {
	case s == t:
		return true
	case v.isAbsorbing(s):
		return false
	case t == End:
		return true
	}
	return v.stateOK(t) && (v.maxChanges == 0 || changes(s, t) <= v.maxChanges) &&
		uint64(s)&^uint64(t)&v.irreversible == 0 && !v.forbidden[[2]State{s, t}]
}

// move returns "" if s → t is valid, else the rule it breaks.
func (v *validity) move(s, t State) string {
	if v.allowed(s, t) {
		return ""
	}
	switch {
	case v.isAbsorbing(s):
		return fmt.Sprintf("%s is absorbing", s.Name(v.n))
	case !v.stateOK(t):
		return fmt.Sprintf("%s violates valid_states", t.Name(v.n))
	case v.maxChanges > 0 && changes(s, t) > v.maxChanges:
		return fmt.Sprintf("%d predicates change, max_changes is %d", changes(s, t), v.maxChanges)
	case uint64(s)&^uint64(t)&v.irreversible != 0:
		return "an irreversible predicate turns back to false"
	}
	return "the pair is forbidden"
}
