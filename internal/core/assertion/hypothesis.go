// SPDX-License-Identifier: Apache-2.0

package assertion

import (
	"slices"

	"github.com/agentguard/agentguard/internal/core/texpr"
)

// A question before an action ("may the agent do this now?") is answered by
// stepping the action's events through copies of a group's monitors. The
// monitors are deterministic, so replaying the group's events (which it
// keeps for explanations anyway) into a scratch group rebuilds them exactly,
// as a checkpoint's restore does; the group itself is never stepped.

// NewScratch is a group to answer questions in, reused from one question to
// the next by one goroutine: once warm, a replay allocates nothing.
func (r *Runner) NewScratch() *Group {
	g := r.NewGroup()
	g.scratch = true
	return g
}

// Hypothesis is what a group's next events would decide.
type Hypothesis struct {
	// Verdicts are the verdicts the events would decide, each on its
	// event's span (which the caller made for the question).
	Verdicts []Verdict
	// Unreplayable are the assertions over capture predicates, whose
	// bindings a replay of the group's bits cannot rebuild: they are not
	// asked. The runner's own slice: read only.
	Unreplayable []*Compiled
}

// WouldDecide answers what evs, as the next events of group g (nil: a group
// not begun), would decide, replaying g into scratch; g does not change.
func (r *Runner) WouldDecide(key string, g, scratch *Group, evs []Event) Hypothesis {
	var h Hypothesis
	scratch.events = scratch.events[:0]
	for i := range scratch.monitors {
		scratch.monitors[i].Reset()
	}
	if g != nil {
		for _, ev := range g.events {
			scratch.events = append(scratch.events, ev)
			for i := range scratch.monitors {
				if !slices.Contains(r.unreplayable, &r.assertions[i]) {
					scratch.monitors[i].Replay(texpr.Event{Bits: ev.bits, Time: ev.time, Ref: len(scratch.events) - 1})
				}
			}
		}
	}
	for _, v := range r.Step(key, scratch, evs) {
		if !slices.Contains(r.unreplayable, v.Assertion) {
			h.Verdicts = append(h.Verdicts, v)
		}
	}
	h.Unreplayable = r.unreplayable
	return h
}
