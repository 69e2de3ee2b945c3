package guard

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/assertion"
)

// probguard's attributes on the gen_ai.evaluation.result event.
const (
	CheckProb               = "probguard"
	LabelRisk               = "risk"
	LabelUnknown            = "unknown_state"
	AttrState               = "agentguard.state"
	AttrStateHolds          = "agentguard.state.holds"
	AttrMonitor             = "agentguard.monitor"
	AttrPSafe               = "agentguard.p_safe"
	AttrThreshold           = "agentguard.threshold"
	AttrEvidenceNextState   = "agentguard.evidence.next_state"
	AttrEvidenceProbability = "agentguard.evidence.probability"
	AttrUnknownState        = "agentguard.unknown_state"
	AttrEvent               = "agentguard.event"
)

// Annotate writes a reported decision onto the span of the group's event
// number event (1-based): a gen_ai.evaluation.result event, and
// agentguard.violation = true on the span when the unsafe state is reached.
func (g *Guard) Annotate(span ptrace.Span, d Decision, group string, event int) {
	ev := span.Events().AppendEmpty()
	ev.SetName(assertion.EvaluationEvent)
	ev.SetTimestamp(span.EndTimestamp())
	attrs := ev.Attributes()
	attrs.PutStr(assertion.AttrEvaluationName, g.PropertyName())
	attrs.PutStr(assertion.AttrExplanation, g.Explain(d))
	attrs.PutStr(assertion.AttrCheck, CheckProb)
	attrs.PutStr(assertion.AttrGroup, group)
	attrs.PutInt(AttrEvent, int64(event))
	attrs.PutStr(AttrState, g.StateName(d.State))
	holds := attrs.PutEmptySlice(AttrStateHolds)
	for _, name := range g.HoldingPredicates(d.State) {
		holds.AppendEmpty().SetStr(name)
	}
	if g.monitor != nil {
		attrs.PutStr(AttrMonitor, g.monitor.String(d.Monitor))
	}
	attrs.PutDouble(AttrThreshold, g.opts.Threshold)
	if !d.Known && !d.Violation {
		attrs.PutStr(assertion.AttrScoreLabel, LabelUnknown)
		attrs.PutBool(AttrUnknownState, true)
		return
	}
	attrs.PutStr(assertion.AttrScoreLabel, LabelRisk)
	attrs.PutDouble(assertion.AttrScoreValue, d.PSafe)
	attrs.PutDouble(AttrPSafe, d.PSafe)
	if d.Evidence.Risk > 0 {
		attrs.PutStr(AttrEvidenceNextState, g.StateName(g.model.States()[d.Evidence.State]))
		attrs.PutDouble(AttrEvidenceProbability, d.Evidence.Prob)
	}
	if d.Violation {
		attrs.PutBool(assertion.AttrViolation, true)
		span.Attributes().PutBool(assertion.AttrViolation, true)
	}
}
