// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/extension/riskendpoint"
	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/stage"
)

// temporalProcessor is the holding stage with the assertions as its
// evaluator; with risk_endpoint, it also answers an agent that asks before
// it acts.
type temporalProcessor struct {
	*stage.Stage[*assertion.Group]
	c          *checker
	id         component.ID
	scratch    sync.Pool // *assertion.Group: a worker's replay of a group, reused
	unregister func()
}

// Start starts the stage and then, if a risk endpoint is set, registers
// with it: a question or a peer's hand-over that came while the stage
// restored its checkpoint would find the groups not yet back.
func (p *temporalProcessor) Start(ctx context.Context, host component.Host) error {
	var registry riskendpoint.Registry
	if id := p.c.cfg.RiskEndpoint; id != nil {
		ext, reg, err := riskendpoint.Find[riskendpoint.Registry](host, *id)
		if err != nil {
			return err
		}
		registry = reg
		if tier, ok := riskendpoint.TierFor(ext, p.id.String()); ok {
			if err := p.c.runner.Checkpointable(); err != nil {
				return fmt.Errorf("risk_endpoint %q has peers (a tier, where conversations are handed over between members), but %w", id, err)
			}
			p.UseTier(tier)
		}
	}
	if err := p.Stage.Start(ctx, host); err != nil {
		return err
	}
	if registry != nil {
		p.unregister = registry.Register(p.id.String(), p)
	}
	return nil
}

// Shutdown stops answering, then judges and passes on what is held.
func (p *temporalProcessor) Shutdown(ctx context.Context) error {
	if p.unregister != nil {
		p.unregister()
	}
	return p.Stage.Shutdown(ctx)
}

// Decide answers what action would decide as the group's next events: the
// violations its assertions would report, each with the effect its enforce
// gives, from a replay of the group on the worker that owns it. The group
// does not change.
func (p *temporalProcessor) Decide(ctx context.Context, q riskendpoint.Question) (riskendpoint.Answer, error) {
	out := make(chan riskendpoint.Answer, 1)
	err := p.Ask(ctx, q.Group, q.AfterSpanID, q.Action, func(h stage.Hypothesis[*assertion.Group]) { out <- p.answer(q.Group, h) })
	if err != nil {
		return riskendpoint.Answer{}, err
	}
	return <-out, nil
}

func (p *temporalProcessor) answer(group string, h stage.Hypothesis[*assertion.Group]) riskendpoint.Answer {
	ans := riskendpoint.Answer{Open: h.Open, New: !h.Open && h.Fresh, History: h.History.String(), Matched: h.Matched}
	if len(h.Events) == 0 || (!h.Open && !h.Fresh) {
		return ans
	}
	var state *assertion.Group // a group not held: the action is judged as a new group's first events, as it will be
	if h.Open {
		ans.Events, state = h.State.Len(), h.State
	}
	scratch, _ := p.scratch.Get().(*assertion.Group)
	if scratch == nil {
		scratch = p.c.runner.NewScratch()
	}
	defer p.scratch.Put(scratch)
	hyp := p.c.runner.WouldDecide(group, state, scratch, assertionEvents(h.Events))
	name := p.id.String()
	for _, v := range hyp.Verdicts {
		if v.Violation && v.Assertion.Enforce != assertion.EnforceOff {
			ans.Reasons = append(ans.Reasons, riskendpoint.Reason{Processor: name, Assertion: v.Assertion.Name,
				Effect: v.Assertion.Enforce, Explanation: v.Explanation})
		}
	}
	for _, a := range hyp.Unreplayable {
		if a.Enforce == assertion.EnforceOff {
			continue
		}
		p.c.warnings.Once("decide-captures-"+a.Name, "an assertion over capture predicates is not asked before an action: a replay of the group cannot bind its captures again",
			zap.String("assertion", a.Name))
		ans.Reasons = append(ans.Reasons, riskendpoint.Reason{Processor: name, Assertion: a.Name, Effect: riskendpoint.Allow,
			Explanation: a.Name + ": not asked: it binds captured values, which a replay of the group cannot bind again"})
	}
	return ans
}
