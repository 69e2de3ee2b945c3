// SPDX-License-Identifier: Apache-2.0

package main

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

func v(group, assertion string, start, end int64) verdict {
	return verdict{Check: "temporalcheck", Group: group, Assertion: assertion, Verdict: "failure", Label: "fail", Start: start, End: end, TraceID: "t1"}
}

func TestDiffVerdicts(t *testing.T) {
	a, b, c := v("g1", "te1", 1, 3), v("g1", "te2", 2, 4), v("g2", "te1", 1, 3)
	twice := []verdict{a, a, b}
	for _, tc := range []struct {
		name                 string
		single, tier         []verdict
		onlySingle, onlyTier []verdict
	}{
		{"the same", []verdict{a, b, c}, []verdict{a, b, c}, nil, nil},
		{"a miss and an extra", []verdict{a, b}, []verdict{b, c}, []verdict{a}, []verdict{c}},
		{"reported twice by the tier", []verdict{a, b}, twice, nil, []verdict{a}},
		{"nothing from the tier", []verdict{a, c}, nil, []verdict{a, c}, nil},
	} {
		s, tr := diffVerdicts(tc.single, tc.tier)
		if !slices.Equal(s, tc.onlySingle) || !slices.Equal(tr, tc.onlyTier) {
			t.Errorf("%s: diffVerdicts = %v, %v; want %v, %v", tc.name, s, tr, tc.onlySingle, tc.onlyTier)
		}
	}
	// A different explanation is a different verdict.
	d := a
	d.Explanation = "other"
	if s, tr := diffVerdicts([]verdict{a}, []verdict{d}); len(s) != 1 || len(tr) != 1 {
		t.Errorf("verdicts differing in their explanation compared equal")
	}
}

func TestVerdictProblemsAcceptWhatASideMarked(t *testing.T) {
	a, b, c, d := v("g1", "te1", 1, 3), v("g2", "te1", 1, 3), v("g3", "te1", 1, 3), v("g4", "te1", 1, 3)
	raced := a
	raced.Start, raced.End, raced.History = 2, 4, "out_of_order"
	problems, marked := verdictProblems([]verdict{a, b, c, d}, []verdict{raced, b, c, d})
	if len(problems) != 0 || len(marked) != 2 {
		t.Errorf("a group the tier marked out_of_order: problems %q, marked %q; want none, 2", problems, marked)
	}
	// Unmarked, the same difference is a problem.
	unmarked := raced
	unmarked.History = ""
	if problems, marked := verdictProblems([]verdict{a, b, c, d}, []verdict{unmarked, b, c, d}); len(problems) != 2 || len(marked) != 0 {
		t.Errorf("an unmarked difference: problems %q, marked %q; want 2, none", problems, marked)
	}
	// A mark on one group excuses nothing on another.
	if problems, _ := verdictProblems([]verdict{a, b, c, d}, []verdict{raced, c, d}); len(problems) != 1 {
		t.Errorf("a miss on an unmarked group beside a marked one: problems %q; want 1", problems)
	}
	// Marking many groups is not a race.
	racedB := b
	racedB.History = "out_of_order"
	if problems, _ := verdictProblems([]verdict{a, b, c, d}, []verdict{raced, racedB, c, d}); len(problems) != 1 {
		t.Errorf("half the groups marked: problems %q; want 1", problems)
	}
	// A partial mark is no race: nothing restarts in the scenario.
	partial := raced
	partial.History = "partial"
	if problems, marked := verdictProblems([]verdict{a, b, c, d}, []verdict{partial, b, c, d}); len(problems) != 2 || len(marked) != 0 {
		t.Errorf("a difference marked partial: problems %q, marked %q; want 2, none", problems, marked)
	}
	// A verdict reported twice on a raced group is still a defect.
	if problems, marked := verdictProblems([]verdict{a, b, c, d}, []verdict{raced, raced, b, c, d}); len(problems) != 2 || len(marked) != 1 {
		t.Errorf("a marked verdict reported twice: problems %q, marked %q; want 2, 1", problems, marked)
	}
	if problems, _ := verdictProblems([]verdict{a, b, c, d}, []verdict{a, a, raced, b, c, d}); len(problems) != 1 {
		t.Errorf("a verdict both sides reported, the tier twice, on a marked group: problems %q; want 1", problems)
	}
}

func TestVerdictsOf(t *testing.T) {
	r := plog.NewLogRecord()
	r.SetTraceID(pcommon.TraceID{1, 2})
	r.SetSpanID(pcommon.SpanID{9})
	r.Body().SetStr("te1 FAILURE")
	a := r.Attributes()
	a.PutStr(verdictattr.Check, verdictattr.CheckTemporal)
	a.PutStr(verdictattr.Group, "weak-01")
	a.PutStr(verdictattr.EvaluationName, "te1")
	a.PutStr(verdictattr.Verdict, "failure")
	a.PutStr(verdictattr.ScoreLabel, verdictattr.LabelFail)
	a.PutInt(verdictattr.StartEvent, 3)
	a.PutInt(verdictattr.EndEvent, 4)
	a.PutStr(verdictattr.SpanName, verdictSpanName)
	got := verdictsOf([]plog.LogRecord{r})
	want := verdict{Check: "temporalcheck", Group: "weak-01", Assertion: "te1", Verdict: "failure", Label: "fail", Start: 3, End: 4,
		TraceID: "01020000000000000000000000000000", SpanName: verdictSpanName, Explanation: "te1 FAILURE", spanID: "0900000000000000"}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("verdictsOf = %+v; want %+v", got, want)
	}
	if n := verdictSpans(append(got, got...)); n != 1 {
		t.Errorf("two verdicts on one verdict span counted as %d verdict spans", n)
	}
	if vt := violatingTraces(got); !vt[want.TraceID] || len(vt) != 1 {
		t.Errorf("violatingTraces = %v", vt)
	}
}

func TestSpansByTrace(t *testing.T) {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for _, id := range []byte{1, 1, 2} {
		ss.Spans().AppendEmpty().SetTraceID(pcommon.TraceID{id})
	}
	got := spansByTrace([]ptrace.Traces{td, td})
	if len(got) != 2 || got["01000000000000000000000000000000"] != 4 || got["02000000000000000000000000000000"] != 2 {
		t.Errorf("spansByTrace = %v", got)
	}
}

func TestJudgeSampling(t *testing.T) {
	in := map[string]int{"bad": 5, "bad2": 3, "a": 4, "b": 4, "c": 4}
	violating := map[string]bool{"bad": true, "bad2": true}

	s := judgeSampling(in, map[string]int{"bad": 6, "bad2": 3, "a": 4}, violating)
	if len(s.problems) != 0 || s.violatingKept != 2 || s.violating != 2 || s.restKept != 1 || s.rest != 3 {
		t.Errorf("a good sample judged %+v", s)
	}
	s = judgeSampling(in, map[string]int{"bad": 4, "bad2": 3, "a": 2}, violating)
	want := []string{"trace a: 2 of its 4 spans kept", "violating trace bad: 4 of its 5 spans kept", "0 of the 3 traces without a violation kept: want a sample"}
	slices.Sort(want)
	if !slices.Equal(s.problems, want) {
		t.Errorf("problems = %q; want %q", s.problems, want)
	}
	s = judgeSampling(in, map[string]int{"bad": 5, "bad2": 3, "a": 4, "b": 4, "c": 4}, violating)
	if !slices.Equal(s.problems, []string{"3 of the 3 traces without a violation kept: want a sample"}) {
		t.Errorf("keeping everything judged %q", s.problems)
	}
	s = judgeSampling(in, in, map[string]bool{"bad": true, "gone": true, "a": true})
	if !slices.Contains(s.problems, "a violation on trace gone, which was not sent") {
		t.Errorf("a violation on a trace never sent passed: %q", s.problems)
	}
}
