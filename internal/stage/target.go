// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"math/rand/v2"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/verdictattr"
)

// The verdict span: where a group's end-of-group verdicts go when its spans
// have already been passed on (a conversation ended by group_timeout, by a
// bound, or at shutdown after its last trace left). It is a child of the
// group's last event, in that event's trace, so a trace view shows it in
// place and verdictlogs turns its evaluation events into log records like
// any other. The stage passes such spans straight through (a processor after
// this one must not hold them as a new trace's spans).
const (
	// VerdictScopeSuffix ends the scope name of verdict spans.
	VerdictScopeSuffix = "/verdicts"
	// VerdictSpanName names the verdict span.
	VerdictSpanName = "agentguard verdict"
)

// Target is where an evaluator writes the verdicts it decides as a group
// ends: the span of the group's last event while that span is still in the
// stage, else a verdict span, made on first use.
type Target struct {
	span  ptrace.Span
	ready bool
	make  func() ptrace.Span
}

// Span is the span to write on.
func (t *Target) Span() ptrace.Span {
	if !t.ready {
		t.span, t.ready = t.make(), true
	}
	return t.span
}

// verdictSpans collects the verdict spans of one worker's batch.
type verdictSpans struct {
	scope string
	rng   *rand.Rand
	td    ptrace.Traces
	made  int
}

// make adds a verdict span for group key, whose last event was parent in
// trace, from a service named service ("" when unknown).
func (v *verdictSpans) make(key string, trace pcommon.TraceID, parent pcommon.SpanID, service string, now time.Time) ptrace.Span {
	if v.made == 0 {
		v.td = ptrace.NewTraces()
	}
	v.made++
	rs := v.td.ResourceSpans().AppendEmpty()
	if service != "" {
		rs.Resource().Attributes().PutStr("service.name", service)
	}
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(v.scope + VerdictScopeSuffix)
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID(trace)
	sp.SetParentSpanID(parent)
	var id pcommon.SpanID
	for id.IsEmpty() {
		for i := range id {
			id[i] = byte(v.rng.Uint32())
		}
	}
	sp.SetSpanID(id)
	sp.SetName(VerdictSpanName)
	sp.SetKind(ptrace.SpanKindInternal)
	ts := pcommon.NewTimestampFromTime(now)
	sp.SetStartTimestamp(ts)
	sp.SetEndTimestamp(ts)
	sp.Attributes().PutStr(verdictattr.Group, key)
	return sp
}

// take returns the batch's verdict spans, if any, and starts a new batch.
func (v *verdictSpans) take() (ptrace.Traces, int) {
	td, n := v.td, v.made
	v.td, v.made = ptrace.Traces{}, 0
	return td, n
}

// isVerdictScope reports whether spans under this scope are verdict spans.
func isVerdictScope(ss ptrace.ScopeSpans) bool {
	name := ss.Scope().Name()
	return strings.HasPrefix(name, "github.com/agentguard/") && strings.HasSuffix(name, VerdictScopeSuffix)
}
