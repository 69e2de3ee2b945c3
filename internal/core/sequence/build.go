package sequence

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// candidate is a group key value seen at one span; the earliest span wins,
// so that the key does not depend on which batch or resource came first.
type candidate struct {
	at    ptrace.Span
	value string
	found bool
}

func (c *candidate) offer(sp ptrace.Span, v pcommon.Value, ok bool) {
	if !ok {
		return
	}
	if c.found && compareSpans(sp, c.at) >= 0 {
		return
	}
	*c = candidate{at: sp, value: v.AsString(), found: true}
}

// building is one trace while Split reads the batch.
type building struct {
	Trace
	first    ptrace.Span // earliest span, to order the traces
	hasFirst bool
	// onSpan and onResource: the group key found on a span's own attributes
	// wins over one found on a resource (the span's is more specific: in ADK
	// only invoke_agent spans carry gen_ai.conversation.id).
	onSpan, onResource candidate
}

type builder struct {
	groupBy string
	traces  map[pcommon.TraceID]*building
}

func (b *builder) add(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span, classify Classifier) {
	t := b.trace(sp)
	if !t.hasFirst || compareSpans(sp, t.first) < 0 {
		t.first, t.hasFirst = sp, true
	}
	if b.groupBy != ByTraceID {
		v, ok := sp.Attributes().Get(b.groupBy)
		t.onSpan.offer(sp, v, ok)
		v, ok = rs.Resource().Attributes().Get(b.groupBy)
		t.onResource.offer(sp, v, ok)
	}
	if ok, sig := classify(rs, ss, sp); ok {
		t.Events = append(t.Events, Event{Span: sp, Start: sp.StartTimestamp(), Signals: sig, Bits: sig})
	}
}

func (b *builder) trace(sp ptrace.Span) *building {
	id := sp.TraceID()
	t, ok := b.traces[id]
	if !ok {
		t = &building{Trace: Trace{ID: id}}
		b.traces[id] = t
	}
	return t
}

func (b *builder) finish() []Trace {
	all := make([]*building, 0, len(b.traces))
	for _, t := range b.traces {
		slices.SortFunc(t.Events, Compare)
		t.setGroup(b.groupBy)
		all = append(all, t)
	}
	slices.SortFunc(all, func(x, y *building) int { return compareSpans(x.first, y.first) })
	out := make([]Trace, len(all))
	for i, t := range all {
		out[i] = t.Trace
	}
	return out
}

func (t *building) setGroup(groupBy string) {
	switch {
	case groupBy == ByTraceID:
		t.Group, t.GroupFound = t.ID.String(), true
	case t.onSpan.found:
		t.Group, t.GroupFound = t.onSpan.value, true
	case t.onResource.found:
		t.Group, t.GroupFound = t.onResource.value, true
	}
}
