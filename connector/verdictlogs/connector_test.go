// SPDX-License-Identifier: Apache-2.0

package verdictlogs

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/connector/verdictlogs/internal/metadata"
	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/verdictattr"
)

// annotated is a trace of the paper's failing run, annotated by the real
// assertion runner: the third span carries te1's failure and the pending
// evaluation started there; a fourth span, in a scope of its own, carries a
// foreign evaluation event that is not agentguard's.
func annotated(t *testing.T) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "weather-agents")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("gcp.vertex.agent")
	var evs []assertion.Event
	for i, bits := range []uint64{1, 4, 1} {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{1})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
		sp.SetName("execute_tool " + []string{"transfer_to_agent", "say_hello", "transfer_to_agent"}[i])
		sp.SetEndTimestamp(pcommon.Timestamp(int64(i+1) * 1e9))
		evs = append(evs, assertion.Event{Bits: bits, Time: int64(i) * 1e9, Name: sp.Name(), Span: sp})
	}
	compiled, err := assertion.Compile([]assertion.Config{{Name: "te1", Always: "xferToGreeting >> sayHello + xferToWeather"}},
		[]string{"xferToGreeting", "xferToWeather", "sayHello"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range assertion.NewRunner(compiled, assertion.Options{}).Run("trace-1", evs, true) {
		assertion.Annotate(v)
	}
	other := rs.ScopeSpans().AppendEmpty()
	other.Scope().SetName("some.evaluator")
	sp := other.Spans().AppendEmpty()
	sp.Events().AppendEmpty().SetName(verdictattr.EvaluationEvent) // no agentguard.check
	return td
}

func runConnector(t *testing.T, cfg *Config, td ptrace.Traces) []plog.Logs {
	sink := new(consumertest.LogsSink)
	c, err := NewFactory().CreateTracesToLogs(context.Background(), connectortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	if err := c.ConsumeTraces(context.Background(), td); err != nil {
		t.Fatal(err)
	}
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return sink.AllLogs()
}

func TestVerdictsBecomeLogRecords(t *testing.T) {
	logs := runConnector(t, createDefaultConfig(), annotated(t))
	if len(logs) != 1 || logs[0].ResourceLogs().Len() != 1 {
		t.Fatalf("got %d batches", len(logs))
	}
	rl := logs[0].ResourceLogs().At(0)
	if v, _ := rl.Resource().Attributes().Get("service.name"); v.Str() != "weather-agents" {
		t.Error("resource not copied")
	}
	if rl.ScopeLogs().Len() != 1 || rl.ScopeLogs().At(0).Scope().Name() != "gcp.vertex.agent" {
		t.Fatalf("scopes: %d", rl.ScopeLogs().Len())
	}
	records := rl.ScopeLogs().At(0).LogRecords()
	if records.Len() != 2 {
		t.Fatalf("%d records, want the failure and the pending verdict", records.Len())
	}
	fail, pending := records.At(0), records.At(1)
	if fail.EventName() != verdictattr.EvaluationEvent || fail.SeverityNumber() != plog.SeverityNumberWarn || fail.SeverityText() != "WARN" {
		t.Errorf("failure record: %s %v %s", fail.EventName(), fail.SeverityNumber(), fail.SeverityText())
	}
	if fail.TraceID() != (pcommon.TraceID{1}) || fail.SpanID() != (pcommon.SpanID{3}) || fail.Timestamp() != pcommon.Timestamp(3e9) {
		t.Errorf("ids/time: %v %v %v", fail.TraceID(), fail.SpanID(), fail.Timestamp())
	}
	attrs := fail.Attributes().AsRaw()
	if attrs[verdictattr.EvaluationName] != "te1" || attrs[verdictattr.Group] != "trace-1" || attrs[verdictattr.SpanName] != "execute_tool transfer_to_agent" {
		t.Errorf("attributes %v", attrs)
	}
	if body := fail.Body().Str(); body != attrs[verdictattr.Explanation] || body == "" {
		t.Errorf("body %q", body)
	}
	if pending.SeverityNumber() != plog.SeverityNumberInfo {
		t.Errorf("pending verdict severity %v", pending.SeverityNumber())
	}
}

func TestViolationsOnly(t *testing.T) {
	logs := runConnector(t, &Config{Checks: []string{verdictattr.CheckTemporal}, Passes: false}, annotated(t))
	if len(logs) != 1 || logs[0].LogRecordCount() != 1 {
		t.Fatalf("got %d batches", len(logs))
	}
}

func TestOtherChecksAndPlainSpansGiveNothing(t *testing.T) {
	if logs := runConnector(t, &Config{Checks: []string{verdictattr.CheckProb}, Passes: true}, annotated(t)); len(logs) != 0 {
		t.Fatalf("probguard only: %d batches", len(logs))
	}
	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("plain")
	if logs := runConnector(t, createDefaultConfig(), td); len(logs) != 0 {
		t.Fatalf("plain spans: %d batches", len(logs))
	}
}
