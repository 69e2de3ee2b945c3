// SPDX-License-Identifier: Apache-2.0

package assertion

import (
	"strings"

	"github.com/agentguard/agentguard/internal/core/texpr"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// Annotate writes an attached verdict onto its span: a gen_ai.evaluation.result
// event, and agentguard.violation = true on the span for a violation.
func Annotate(v Verdict) {
	if !v.Attached {
		return
	}
	ev := v.Span.Events().AppendEmpty()
	ev.SetName(verdictattr.EvaluationEvent)
	ev.SetTimestamp(v.Span.EndTimestamp())
	attrs := ev.Attributes()
	attrs.EnsureCapacity(annotationAttributes) // one allocation, not one per doubling
	attrs.PutStr(verdictattr.EvaluationName, v.Assertion.Name)
	label, score := scoreOf(v)
	attrs.PutStr(verdictattr.ScoreLabel, label)
	if score >= 0 {
		attrs.PutDouble(verdictattr.ScoreValue, score)
	}
	attrs.PutStr(verdictattr.Explanation, v.Explanation+verdictattr.HistoryNote(v.History))
	attrs.PutStr(verdictattr.Check, verdictattr.CheckTemporal)
	attrs.PutStr(verdictattr.Expression, v.Assertion.Kind+": "+v.Assertion.Expression)
	attrs.PutStr(verdictattr.Verdict, v.VerdictName())
	attrs.PutInt(verdictattr.StartEvent, int64(v.Start))
	attrs.PutInt(verdictattr.EndEvent, int64(v.End))
	attrs.PutStr(verdictattr.Group, v.Group)
	if v.History != "" {
		attrs.PutStr(verdictattr.History, v.History)
	}
	if v.Violation {
		v.Span.Attributes().PutBool(verdictattr.Violation, true)
	}
}

// annotationAttributes is how many attributes Annotate puts on an event.
const annotationAttributes = 10

// VerdictName is the verdict as agentguard.verdict and the self-metrics
// name it: match, failure, pending or error.
func (v Verdict) VerdictName() string { return strings.ToLower(v.Kind.String()) }

// scoreOf: a violation scores 0, a pass 1; a pending verdict has no score.
func scoreOf(v Verdict) (string, float64) {
	switch {
	case v.Violation:
		return verdictattr.LabelFail, 0
	case v.Kind == texpr.Pending:
		return verdictattr.LabelInconclusive, -1
	}
	return verdictattr.LabelPass, 1
}
