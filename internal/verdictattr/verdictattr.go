// SPDX-License-Identifier: Apache-2.0

// Package verdictattr names a verdict as it travels: the span event the
// processors write (gen_ai.evaluation.result), its attributes, and the values
// of the two attributes readers branch on (the check and the score label).
//
// temporalcheck and probguard write these names, the verdictlogs connector and
// `agentguard check` read them back; one package keeps writer and readers in
// step. It is not called semconv: most of the names are agentguard's own, and
// semconv is the name of OpenTelemetry's convention packages.
package verdictattr

// EvaluationEvent is the span event that carries a verdict (GenAI semantic
// conventions).
const EvaluationEvent = "gen_ai.evaluation.result"

// The GenAI semantic conventions' evaluation attributes.
const (
	EvaluationName = "gen_ai.evaluation.name"
	ScoreLabel     = "gen_ai.evaluation.score.label"
	ScoreValue     = "gen_ai.evaluation.score.value"
	Explanation    = "gen_ai.evaluation.explanation"
)

// agentguard's attributes on every verdict. Violation is also set on the
// span itself, so that a span search finds violations without reading events.
const (
	Check     = "agentguard.check"
	Group     = "agentguard.group"
	Violation = "agentguard.violation"
)

// History is set on a verdict decided on a group history that may be
// incomplete: partial (its beginning may be missing: first seen in the
// warm-up after a start, or back after max_traces ended it) or out_of_order
// (a trace of it was judged after a later one). A verdict on a complete
// history does not carry it. A marked verdict is reported as it would be
// otherwise: the mark qualifies it, it does not withdraw it.
const History = "agentguard.history"

// The values of History.
const (
	HistoryPartial    = "partial"
	HistoryOutOfOrder = "out_of_order"
)

// HistoryNote is the line a marked verdict's explanation ends with, so that
// whoever reads only the explanation (a log record's body) sees the mark
// too; "" for an unmarked verdict.
func HistoryNote(history string) string {
	switch history {
	case HistoryPartial:
		return "History partial: this group's earlier events may be missing (it was first seen just after a restart, or after max_traces ended it), so this verdict may be wrong.\n"
	case HistoryOutOfOrder:
		return "History out of order: a trace of this group was judged after a later one, so this verdict may be wrong.\n"
	}
	return ""
}

// temporalcheck's attributes: the assertion's expression, its verdict
// (match, failure, pending, error) and the 1-based events of the group it
// spans.
const (
	Expression = "agentguard.expression"
	Verdict    = "agentguard.verdict"
	StartEvent = "agentguard.start_event"
	EndEvent   = "agentguard.end_event"
)

// probguard's attributes: the 1-based event of the group scored, the model
// state there and the predicates holding in it, the property monitor's state,
// P(stay safe) against the threshold, the likeliest next state on the way to
// unsafe, and whether the state was never seen in training.
const (
	EventNumber         = "agentguard.event"
	State               = "agentguard.state"
	StateHolds          = "agentguard.state.holds"
	Monitor             = "agentguard.monitor"
	PSafe               = "agentguard.p_safe"
	PSafeLow            = "agentguard.p_safe_low"
	PSafeHigh           = "agentguard.p_safe_high"
	Threshold           = "agentguard.threshold"
	EvidenceNextState   = "agentguard.evidence.next_state"
	EvidenceProbability = "agentguard.evidence.probability"
	UnknownState        = "agentguard.unknown_state"
)

// SpanName is the verdictlogs connector's: the name of the span the verdict
// was written on, which a log record does not otherwise carry.
const SpanName = "agentguard.span.name"

// The values of Check: which processor wrote the verdict.
const (
	CheckTemporal = "temporalcheck"
	CheckProb     = "probguard"
)

// The values of ScoreLabel. fail, risk and unknown_state are warnings; pass
// and inconclusive are not.
const (
	LabelFail         = "fail"
	LabelPass         = "pass"
	LabelInconclusive = "inconclusive"
	LabelRisk         = "risk"
	LabelUnknownState = "unknown_state"
)
