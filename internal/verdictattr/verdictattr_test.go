// SPDX-License-Identifier: Apache-2.0

package verdictattr

import (
	"testing"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// The gen_ai.* names are the published conventions', not look-alikes: a
// backend that knows the conventions must find them.
func TestGenAINamesAreTheConventions(t *testing.T) {
	for ours, theirs := range map[string]string{
		EvaluationName: string(semconv.GenAIEvaluationNameKey),
		ScoreLabel:     string(semconv.GenAIEvaluationScoreLabelKey),
		ScoreValue:     string(semconv.GenAIEvaluationScoreValueKey),
		Explanation:    string(semconv.GenAIEvaluationExplanationKey),
	} {
		if ours != theirs {
			t.Errorf("%q, the conventions say %q", ours, theirs)
		}
	}
}

// The wire names, pinned: users' queries, dashboards and alerts name them, so
// a rename must be a deliberate change here too, never a slip.
func TestWireNames(t *testing.T) {
	for got, want := range map[string]string{
		EvaluationEvent: "gen_ai.evaluation.result",
		Check:           "agentguard.check", Group: "agentguard.group", Violation: "agentguard.violation",
		Expression: "agentguard.expression", Verdict: "agentguard.verdict",
		StartEvent: "agentguard.start_event", EndEvent: "agentguard.end_event",
		EventNumber: "agentguard.event", State: "agentguard.state", StateHolds: "agentguard.state.holds",
		Monitor: "agentguard.monitor", PSafe: "agentguard.p_safe", Threshold: "agentguard.threshold",
		EvidenceNextState: "agentguard.evidence.next_state", EvidenceProbability: "agentguard.evidence.probability",
		UnknownState: "agentguard.unknown_state", SpanName: "agentguard.span.name",
		CheckTemporal: "temporalcheck", CheckProb: "probguard",
		LabelFail: "fail", LabelPass: "pass", LabelInconclusive: "inconclusive",
		LabelRisk: "risk", LabelUnknownState: "unknown_state",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}
