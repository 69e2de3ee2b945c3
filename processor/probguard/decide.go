// SPDX-License-Identifier: Apache-2.0

package probguard

import (
	"context"
	"math"

	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/guard"
	"github.com/agentguard/agentguard/internal/stage"
)

// Decide answers what action would mean as the group's next events: the
// state it leads to, scored from a copy of the group's run on the worker
// that owns it, and, when that state is a risk, the unsafe state or an
// unknown one reported under unknown_state: alert, a reason with the effect
// enforce gives. The group does not change. The action is classified by
// the predicates as its span stands before the call: a predicate over the
// call's result cannot hold yet.
func (p *probProcessor) Decide(ctx context.Context, q riskendpoint.Question) (riskendpoint.Answer, error) {
	out := make(chan riskendpoint.Answer, 1)
	err := p.Ask(ctx, q.Group, q.AfterSpanID, q.Action, func(h stage.Hypothesis[*group]) { out <- p.answer(h) })
	if err != nil {
		return riskendpoint.Answer{}, err
	}
	return <-out, nil
}

func (p *probProcessor) answer(h stage.Hypothesis[*group]) riskendpoint.Answer {
	ans := riskendpoint.Answer{Open: h.Open, New: !h.Open && h.Fresh, History: h.History.String(), Matched: h.Matched}
	served := p.served.Load()
	if len(h.Events) == 0 || served == nil || (!h.Open && !h.Fresh) {
		return ans
	}
	var run guard.Run // a group not held: the action is scored as a new group's first events, as it will be
	if h.Open {
		ans.Events, run = h.State.events, h.State.run
	}
	var d guard.Decision
	for _, ev := range h.Events {
		d = served.guard.Step(&run, ev.Bits)
	}
	warning := d.Violation || d.Below || (!d.Known && p.cfg.UnknownState == guard.UnknownAlert)
	if !warning || p.cfg.Enforce == assertion.EnforceOff {
		return ans
	}
	r := riskendpoint.Reason{Processor: p.id.String(), Effect: p.cfg.Enforce, Explanation: served.guard.Explain(d)}
	if d.Violation || d.Known {
		ps, theta := d.PSafe, p.cfg.Threshold
		r.PSafe, r.Threshold = &ps, &theta
		if !math.IsNaN(d.PSafeLow) {
			low, high := d.PSafeLow, d.PSafeHigh
			r.PSafeLow, r.PSafeHigh = &low, &high
		}
	}
	ans.Reasons = append(ans.Reasons, r)
	return ans
}
