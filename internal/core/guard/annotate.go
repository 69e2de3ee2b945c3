// SPDX-License-Identifier: Apache-2.0

package guard

import (
	"go.opentelemetry.io/collector/pdata/ptrace"
	"math"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

// Annotate writes a reported decision onto the span of the group's event
// number event (1-based): a gen_ai.evaluation.result event, and
// agentguard.violation = true on the span when the unsafe state is reached.
func (g *Guard) Annotate(span ptrace.Span, d Decision, group string, event int) {
	ev := span.Events().AppendEmpty()
	ev.SetName(verdictattr.EvaluationEvent)
	ev.SetTimestamp(span.EndTimestamp())
	attrs := ev.Attributes()
	attrs.EnsureCapacity(annotationAttributes)
	attrs.PutStr(verdictattr.EvaluationName, g.PropertyName())
	attrs.PutStr(verdictattr.Explanation, g.Explain(d))
	attrs.PutStr(verdictattr.Check, verdictattr.CheckProb)
	attrs.PutStr(verdictattr.Group, group)
	attrs.PutInt(verdictattr.EventNumber, int64(event))
	attrs.PutStr(verdictattr.State, g.StateName(d.State))
	holds := attrs.PutEmptySlice(verdictattr.StateHolds)
	for _, name := range g.HoldingPredicates(d.State) {
		holds.AppendEmpty().SetStr(name)
	}
	if g.monitor != nil {
		attrs.PutStr(verdictattr.Monitor, g.monitor.String(d.Monitor))
	}
	attrs.PutDouble(verdictattr.Threshold, g.opts.Threshold)
	if !d.Known && !d.Violation {
		attrs.PutStr(verdictattr.ScoreLabel, verdictattr.LabelUnknownState)
		attrs.PutBool(verdictattr.UnknownState, true)
		return
	}
	attrs.PutStr(verdictattr.ScoreLabel, verdictattr.LabelRisk)
	attrs.PutDouble(verdictattr.ScoreValue, d.PSafe)
	attrs.PutDouble(verdictattr.PSafe, d.PSafe)
	if !math.IsNaN(d.PSafeLow) {
		attrs.PutDouble(verdictattr.PSafeLow, d.PSafeLow)
		attrs.PutDouble(verdictattr.PSafeHigh, d.PSafeHigh)
	}
	if d.Evidence.Risk > 0 {
		attrs.PutStr(verdictattr.EvidenceNextState, g.StateName(g.model.States()[d.Evidence.State]))
		attrs.PutDouble(verdictattr.EvidenceProbability, d.Evidence.Prob)
	}
	if d.Violation {
		attrs.PutBool(verdictattr.Violation, true)
		span.Attributes().PutBool(verdictattr.Violation, true)
	}
}

// annotationAttributes is the most attributes Annotate writes on an event.
const annotationAttributes = 15
