// SPDX-License-Identifier: Apache-2.0

package verdictlogs

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// A verdict decided on a history that may be incomplete reaches its log
// record marked: the attribute, and the note that ends its body. It stays
// a warning: the mark qualifies it, it does not hide it.
func TestMarkedVerdictKeepsItsMark(t *testing.T) {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1})
	sp.SetSpanID(pcommon.SpanID{1})
	sp.SetName("execute_tool say_goodbye")
	compiled, err := assertion.Compile([]assertion.Config{{Name: "te3", Always: "xferToWeather >> getWeather"}},
		[]string{"xferToWeather", "getWeather"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	runner := assertion.NewRunner(compiled, assertion.Options{})
	vs := runner.Run("c1", []assertion.Event{{Bits: 1, Span: sp}, {Bits: 0, Span: sp}}, true)
	if len(vs) != 1 || !vs[0].Violation {
		t.Fatalf("verdicts %v", vs)
	}
	vs[0].History = verdictattr.HistoryOutOfOrder
	assertion.Annotate(vs[0])

	logs := runConnector(t, createDefaultConfig(), td)
	if len(logs) != 1 || logs[0].LogRecordCount() != 1 {
		t.Fatalf("got %d batches", len(logs))
	}
	lr := logs[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	if v, _ := lr.Attributes().Get(verdictattr.History); v.Str() != verdictattr.HistoryOutOfOrder {
		t.Errorf("%s = %q, want %q", verdictattr.History, v.Str(), verdictattr.HistoryOutOfOrder)
	}
	if !strings.HasSuffix(lr.Body().Str(), verdictattr.HistoryNote(verdictattr.HistoryOutOfOrder)) {
		t.Errorf("body does not end with the history note:\n%s", lr.Body().Str())
	}
	if lr.SeverityText() != "WARN" {
		t.Errorf("severity %q, want WARN", lr.SeverityText())
	}
}
