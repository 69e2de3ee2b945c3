package assertion

import (
	"strings"

	"github.com/agentguard/agentguard/internal/core/texpr"
)

// The GenAI semantic conventions' evaluation event and agentguard's own
// attributes beside it.
const (
	EvaluationEvent      = "gen_ai.evaluation.result"
	AttrEvaluationName   = "gen_ai.evaluation.name"
	AttrScoreLabel       = "gen_ai.evaluation.score.label"
	AttrScoreValue       = "gen_ai.evaluation.score.value"
	AttrExplanation      = "gen_ai.evaluation.explanation"
	AttrCheck            = "agentguard.check"
	AttrExpression       = "agentguard.expression"
	AttrVerdict          = "agentguard.verdict"
	AttrStartEvent       = "agentguard.start_event"
	AttrEndEvent         = "agentguard.end_event"
	AttrGroup            = "agentguard.group"
	AttrViolation        = "agentguard.violation"
	CheckTemporal        = "temporalcheck"
	LabelFail, LabelPass = "fail", "pass"
	LabelInconclusive    = "inconclusive"
)

// Annotate writes an attached verdict onto its span: a gen_ai.evaluation.result
// event, and agentguard.violation = true on the span for a violation.
func Annotate(v Verdict) {
	if !v.Attached {
		return
	}
	ev := v.Span.Events().AppendEmpty()
	ev.SetName(EvaluationEvent)
	ev.SetTimestamp(v.Span.EndTimestamp())
	attrs := ev.Attributes()
	attrs.PutStr(AttrEvaluationName, v.Assertion.Name)
	label, score := scoreOf(v)
	attrs.PutStr(AttrScoreLabel, label)
	if score >= 0 {
		attrs.PutDouble(AttrScoreValue, score)
	}
	attrs.PutStr(AttrExplanation, v.Explanation)
	attrs.PutStr(AttrCheck, CheckTemporal)
	attrs.PutStr(AttrExpression, v.Assertion.Kind+": "+v.Assertion.Expression)
	attrs.PutStr(AttrVerdict, v.VerdictName())
	attrs.PutInt(AttrStartEvent, int64(v.Start))
	attrs.PutInt(AttrEndEvent, int64(v.End))
	attrs.PutStr(AttrGroup, v.Group)
	if v.Violation {
		v.Span.Attributes().PutBool(AttrViolation, true)
	}
}

// VerdictName is the verdict as agentguard.verdict and the self-metrics
// name it: match, failure, pending or error.
func (v Verdict) VerdictName() string { return strings.ToLower(v.Kind.String()) }

// scoreOf: a violation scores 0, a pass 1; a pending verdict has no score.
func scoreOf(v Verdict) (string, float64) {
	switch {
	case v.Violation:
		return LabelFail, 0
	case v.Kind == texpr.Pending:
		return LabelInconclusive, -1
	}
	return LabelPass, 1
}
