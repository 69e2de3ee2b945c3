// SPDX-License-Identifier: Apache-2.0

package guard

import (
	"fmt"

	"github.com/agentguard/agentguard/internal/core/dtmc"
)

// Learner counts the moves of runs, event by event, into a count table:
// online learning and agentguard learn count through it, so they agree.
// A move the rules forbid is skipped and reported rather than failing the
// whole table, as dtmc.Learn would. It is not safe for concurrent use.
type Learner struct {
	rules  *dtmc.Validity
	n      int // predicates
	counts *dtmc.Counts
}

// Path is one run's place in learning. The zero value is a run not begun.
type Path struct {
	last    dtmc.State
	started bool
}

// NewLearner returns a learner under the spec, with an empty table.
func NewLearner(spec dtmc.Spec) (*Learner, error) {
	rules, err := dtmc.CompileSpec(spec)
	if err != nil {
		return nil, err
	}
	return &Learner{rules: rules, n: len(spec.Predicates), counts: dtmc.NewCounts()}, nil
}

// Step counts the run's next event, whose predicates have the values bits.
// It returns why the move was not counted, or "".
func (l *Learner) Step(p *Path, bits uint64) string {
	s := dtmc.State(bits & (uint64(1)<<uint(l.n) - 1))
	from, started := p.last, p.started
	p.last, p.started = s, true
	if !started {
		// s → end is allowed exactly when s may occur at all.
		if why := l.rules.Disallowed(s, dtmc.End); why != "" {
			return "start: " + why
		}
		l.counts.AddStarts(s, 1)
		return ""
	}
	if why := l.rules.Disallowed(from, s); why != "" {
		return fmt.Sprintf("%s → %s: %s", l.name(from), l.name(s), why)
	}
	l.counts.Add(from, s, 1)
	return ""
}

// End counts the run's move to the end state; a run without events counts
// nothing.
func (l *Learner) End(p *Path) {
	if p.started && l.rules.Disallowed(p.last, dtmc.End) == "" {
		l.counts.Add(p.last, dtmc.End, 1)
	}
	*p = Path{}
}

// Resume takes back the move to the end state that End counted for a run
// that goes on: p is the path as it was before End (saved with its group,
// and the group taken up again by a later trace), so the run counts one
// end, at its last end, as learned offline.
func (l *Learner) Resume(p Path) {
	if p.started && l.rules.Disallowed(p.last, dtmc.End) == "" {
		l.counts.Remove(p.last, dtmc.End, 1)
	}
}

// Counts is the table counted so far (not a copy).
func (l *Learner) Counts() *dtmc.Counts { return l.counts }

// Snapshot is a copy of the table.
func (l *Learner) Snapshot() *dtmc.Counts {
	c := dtmc.NewCounts()
	c.Merge(l.counts)
	return c
}

func (l *Learner) name(s dtmc.State) string { return s.Name(l.n) }

// State is the path's fields, for a checkpoint: the last state counted, and
// whether the run has begun.
func (p Path) State() (last dtmc.State, started bool) { return p.last, p.started }

// PathOf is the path with those fields.
func PathOf(last dtmc.State, started bool) Path { return Path{last: last, started: started} }
