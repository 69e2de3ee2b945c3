// SPDX-License-Identifier: Apache-2.0

package predicate

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

// Evaluation is a predicate over other evaluators' results: an LLM judge in
// Langfuse or Phoenix, or any tool, writes a gen_ai.evaluation.result event
// on the span it judged (name, score label, score value, as the GenAI
// semantic conventions say); the predicate holds at a span that carries one
// with this name (a glob), label and score. Results agentguard wrote itself
// (agentguard.check set) are never read: a verdict must not feed back into
// the verdicts. A span where an evaluation predicate holds is an event, as
// one where an agent predicate holds: the judged span is usually a model
// call, which no events condition selects.
type Evaluation struct {
	Name  string
	Label string
	Score *ScoreRange
}

// ScoreRange bounds a score; each bound is optional, at least one is given.
type ScoreRange struct {
	Lt, Le, Gt, Ge *float64
}

var scoreKeys = []string{"lt", "le", "gt", "ge"}

func decodeEvaluation(raw any) (*Evaluation, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("evaluation: want a map {name: NAME, label: LABEL, score: {lt: N}}, got %T", raw)
	}
	var e Evaluation
	for _, k := range slices.Sorted(maps.Keys(m)) {
		var err error
		switch k {
		case "name":
			e.Name, err = stringValue("evaluation: name", m[k])
		case "label":
			e.Label, err = stringValue("evaluation: label", m[k])
		case "score":
			e.Score, err = decodeScore(m[k])
		default:
			err = fmt.Errorf("evaluation: unknown key %q: valid keys are name, label and score", k)
		}
		if err != nil {
			return nil, err
		}
	}
	return &e, nil
}

func decodeScore(raw any) (*ScoreRange, error) {
	m, ok := raw.(map[string]any)
	if !ok || len(m) == 0 {
		return nil, fmt.Errorf("evaluation: score: want bounds such as {lt: 0.5} (%s), got %v", strings.Join(scoreKeys, ", "), raw)
	}
	var r ScoreRange
	for _, k := range slices.Sorted(maps.Keys(m)) {
		f, ok := toFloat(m[k])
		if !ok {
			return nil, fmt.Errorf("evaluation: score: %s: want a number, got %v (%T)", k, m[k], m[k])
		}
		switch k {
		case "lt":
			r.Lt = &f
		case "le":
			r.Le = &f
		case "gt":
			r.Gt = &f
		case "ge":
			r.Ge = &f
		default:
			return nil, fmt.Errorf("evaluation: score: unknown bound %q: valid bounds are %s", k, strings.Join(scoreKeys, ", "))
		}
	}
	return &r, nil
}

func (e *Evaluation) validate() error {
	if e.Name == "" {
		return fmt.Errorf("evaluation: name is required: the evaluator's %s (a glob: * any run of characters)", verdictattr.EvaluationName)
	}
	return nil // without label or score: any result of that evaluation
}

func (e *Evaluation) String() string {
	parts := []string{"name: " + e.Name}
	if e.Label != "" {
		parts = append(parts, "label: "+e.Label)
	}
	if r := e.Score; r != nil {
		for _, b := range []struct {
			key string
			v   *float64
		}{{"lt", r.Lt}, {"le", r.Le}, {"gt", r.Gt}, {"ge", r.Ge}} {
			if b.v != nil {
				parts = append(parts, "score "+b.key+" "+strconv.FormatFloat(*b.v, 'g', -1, 64))
			}
		}
	}
	return "evaluation(" + strings.Join(parts, ", ") + ")"
}

// evaluationMatch is an Evaluation compiled.
type evaluationMatch struct {
	name  *regexp.Regexp
	label string
	score *ScoreRange
}

func newEvaluationMatch(e *Evaluation) *evaluationMatch {
	return &evaluationMatch{name: regexp.MustCompile(`^` + globPattern(e.Name, `.`) + `$`), label: e.Label, score: e.Score}
}

// match: some evaluation result on the span, not agentguard's own, is
// this one's. The span's own attributes count too: some evaluators record
// a result as a span of its own.
func (m *evaluationMatch) match(span ptrace.Span) bool {
	for _, ev := range span.Events().All() {
		if ev.Name() == verdictattr.EvaluationEvent && m.result(ev.Attributes()) {
			return true
		}
	}
	return m.result(span.Attributes())
}

func (m *evaluationMatch) result(attrs pcommon.Map) bool {
	name, ok := attrs.Get(verdictattr.EvaluationName)
	if !ok || !m.name.MatchString(name.AsString()) {
		return false
	}
	if _, ours := attrs.Get(verdictattr.Check); ours {
		return false
	}
	if m.label != "" {
		label, ok := attrs.Get(verdictattr.ScoreLabel)
		if !ok || label.AsString() != m.label {
			return false
		}
	}
	if m.score == nil {
		return true
	}
	score, ok := numberAttribute(attrs, verdictattr.ScoreValue)
	return ok && m.score.holds(score)
}

func (r *ScoreRange) holds(f float64) bool {
	return !math.IsNaN(f) &&
		(r.Lt == nil || f < *r.Lt) && (r.Le == nil || f <= *r.Le) &&
		(r.Gt == nil || f > *r.Gt) && (r.Ge == nil || f >= *r.Ge)
}
