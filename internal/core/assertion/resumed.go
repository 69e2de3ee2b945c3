// SPDX-License-Identifier: Apache-2.0

package assertion

import (
	"slices"

	"github.com/agentguard/agentguard/internal/core/texpr"
)

// A group that ended (idle past group_timeout) is kept as it was before its
// end, and a later turn takes it up there: the evaluations live at its end
// go on. Those its end decided (on_end: fail or pass) were reported then;
// what they decide later, at a step or at the next end, is not reported
// again. A pending end (on_end: inconclusive) decided nothing, so what they
// decide later is.

// evaluation names one evaluation of a group: its assertion and the cycle
// it started at.
type evaluation struct{ assertion, start int }

// Resumed records that g, as it was saved before its end, is taken up
// again after that end.
func (r *Runner) Resumed(g *Group) {
	g.endedAt = len(g.events)
	g.decidedAtEnd = r.decidedAtEnd(g)
}

// decidedAtEnd are the evaluations the end after g's first endedAt events
// decided, found by replaying those events into a new group and ending it.
func (r *Runner) decidedAtEnd(g *Group) []evaluation {
	if g.endedAt == 0 {
		return nil
	}
	ended := r.NewGroup()
	for _, ev := range g.events[:g.endedAt] {
		ended.replay(ev)
	}
	var decided []evaluation
	for i := range ended.monitors {
		for _, v := range ended.monitors[i].Finish() {
			if v.Kind != texpr.Pending {
				decided = append(decided, evaluation{i, v.Start})
			}
		}
	}
	return decided
}

// reportedAtEnd reports whether v, a verdict of assertion i, is one of an
// evaluation the group's earlier end decided and reported. An Error (too
// many live evaluations, abandoned) is not: its Start is only the oldest
// abandoned one's, and it covers those begun after the end too.
func (g *Group) reportedAtEnd(i int, v texpr.Verdict) bool {
	return v.Kind != texpr.Error && slices.Contains(g.decidedAtEnd, evaluation{i, v.Start})
}
