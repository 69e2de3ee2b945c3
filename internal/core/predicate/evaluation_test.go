// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

// judged is a model call span (no event by itself) that an evaluator
// judged: one gen_ai.evaluation.result event per result given.
func judged(results ...map[string]any) (ptrace.ResourceSpans, ptrace.ScopeSpans, ptrace.Span) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	ss := rs.ScopeSpans().AppendEmpty()
	span := ss.Spans().AppendEmpty()
	span.SetName("chat gpt-4o")
	span.Attributes().PutStr("gen_ai.operation.name", "chat")
	for _, r := range results {
		ev := span.Events().AppendEmpty()
		ev.SetName(verdictattr.EvaluationEvent)
		if err := ev.Attributes().FromRaw(r); err != nil {
			panic(err)
		}
	}
	return rs, ss, span
}

// An evaluation predicate holds where a result of that name, label and
// score is on the span, which it makes an event; agentguard's own results
// never count.
func TestEvaluationPredicates(t *testing.T) {
	cfg, err := decode(t, map[string]any{"predicates": []any{
		map[string]any{"name": "unfaithful", "evaluation": map[string]any{"name": "faithful*", "label": "fail"}},
		map[string]any{"name": "lowScore", "evaluation": map[string]any{"name": "faithfulness", "score": map[string]any{"lt": 0.5}}},
		map[string]any{"name": "anyRelevance", "evaluation": map[string]any{"name": "relevance"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	set := mustCompile(t, cfg.Config, nil)
	faithfulFail := map[string]any{verdictattr.EvaluationName: "faithfulness", verdictattr.ScoreLabel: "fail", verdictattr.ScoreValue: 0.2}
	ours := map[string]any{verdictattr.EvaluationName: "faithfulness", verdictattr.ScoreLabel: "fail", verdictattr.ScoreValue: 0.0,
		verdictattr.Check: verdictattr.CheckTemporal}
	for _, c := range []struct {
		name    string
		results []map[string]any
		event   bool
		sig     Signals
	}{
		{"no result", nil, false, 0},
		{"a failed faithfulness, scored 0.2", []map[string]any{faithfulFail}, true, 0b011},
		{"a pass scored 0.7", []map[string]any{{verdictattr.EvaluationName: "faithfulness", verdictattr.ScoreLabel: "pass", verdictattr.ScoreValue: 0.7}}, false, 0},
		{"a score of exactly 0.5, as text", []map[string]any{{verdictattr.EvaluationName: "faithfulness", verdictattr.ScoreValue: "0.5"}}, false, 0},
		{"a relevance result", []map[string]any{{verdictattr.EvaluationName: "relevance"}}, true, 0b100},
		{"agentguard's own verdict", []map[string]any{ours}, false, 0},
	} {
		isEvent, sig := set.Eval(judged(c.results...))
		if isEvent != c.event || sig != c.sig {
			t.Errorf("%s: event %v, signals %03b; want %v, %03b", c.name, isEvent, sig, c.event, c.sig)
		}
	}
}

func TestEvaluationConfigErrors(t *testing.T) {
	for _, c := range []struct {
		eval any
		want string
	}{
		{map[string]any{"label": "fail"}, "evaluation: name is required"},
		{map[string]any{"name": "x", "score": map[string]any{"below": 1}}, `evaluation: score: unknown bound "below"`},
		{map[string]any{"name": "x", "score": map[string]any{"lt": "low"}}, "evaluation: score: lt: want a number"},
		{map[string]any{"name": "x", "verdict": "fail"}, `evaluation: unknown key "verdict"`},
		{"faithfulness", "evaluation: want a map"},
	} {
		cfg, err := decode(t, map[string]any{"predicates": []any{map[string]any{"name": "e", "evaluation": c.eval}}})
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.eval, err, c.want)
		}
	}
}
