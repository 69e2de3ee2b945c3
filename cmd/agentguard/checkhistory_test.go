// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

// A verdict marked agentguard.history keeps its mark in check's findings
// and says it on its VIOLATION line; an unmarked one says nothing.
func TestCheckShowsTheHistoryMark(t *testing.T) {
	span := ptrace.NewSpan()
	span.SetName("execute_tool get_weather")
	for _, history := range []string{verdictattr.HistoryPartial, ""} {
		ev := span.Events().AppendEmpty()
		ev.SetName(verdictattr.EvaluationEvent)
		a := ev.Attributes()
		a.PutStr(verdictattr.Check, verdictattr.CheckTemporal)
		a.PutStr(verdictattr.EvaluationName, "te"+history)
		a.PutStr(verdictattr.ScoreLabel, verdictattr.LabelFail)
		a.PutStr(verdictattr.Explanation, "why")
		if history != "" {
			a.PutStr(verdictattr.History, history)
		}
	}
	fs := spanFindings(span)
	if len(fs) != 2 || fs[0].History != verdictattr.HistoryPartial || fs[1].History != "" {
		t.Fatalf("findings %+v", fs)
	}
	var out bytes.Buffer
	printReport(&out, &checkReport{Findings: fs})
	lines := strings.Split(out.String(), "\n")
	if !strings.HasPrefix(lines[0], "VIOLATION tepartial ") || !strings.HasSuffix(lines[0], " [history partial]") {
		t.Errorf("marked verdict's line %q", lines[0])
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "VIOLATION te ") && strings.Contains(l, "history") {
			t.Errorf("unmarked verdict's line %q", l)
		}
	}
}
