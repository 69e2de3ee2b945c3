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

// offer takes the value if it is the earliest so far. An empty value counts
// as absent: it would merge unrelated traces into one group "".
func (c *candidate) offer(sp ptrace.Span, v pcommon.Value, ok bool) {
	if !ok || (c.found && compareSpans(sp, c.at) >= 0) {
		return
	}
	if value := v.AsString(); value != "" {
		*c = candidate{at: sp, value: value, found: true}
	}
}

// building is one trace while Split reads the batch.
type building struct {
	Trace
	first    ptrace.Span // earliest span, to order the traces
	hasFirst bool
	// onSpan and onResource, per group key in order of preference: the key
	// found on a span's own attributes wins over one found on a resource (the
	// span's is more specific: in ADK only invoke_agent spans carry
	// gen_ai.conversation.id).
	onSpan, onResource []candidate
}

type builder struct {
	groupBy string
	keys    []string // the attribute keys groupBy reads
	traces  map[pcommon.TraceID]*building
}

func (b *builder) add(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span, classify Classifier) {
	t := b.trace(sp)
	if !t.hasFirst || compareSpans(sp, t.first) < 0 {
		t.first, t.hasFirst = sp, true
	}
	for i, key := range b.keys {
		v, ok := sp.Attributes().Get(key)
		t.onSpan[i].offer(sp, v, ok)
		v, ok = rs.Resource().Attributes().Get(key)
		t.onResource[i].offer(sp, v, ok)
	}
	if ok, sig := classify(rs, ss, sp); ok {
		t.Events = append(t.Events, Event{Span: sp, Start: sp.StartTimestamp(), Signals: sig, Bits: sig})
	}
}

func (b *builder) trace(sp ptrace.Span) *building {
	id := sp.TraceID()
	t, ok := b.traces[id]
	if !ok {
		t = &building{Trace: Trace{ID: id}, onSpan: make([]candidate, len(b.keys)), onResource: make([]candidate, len(b.keys))}
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
	if groupBy == ByTraceID {
		t.Group, t.GroupFound = t.ID.String(), true
		return
	}
	for i := range t.onSpan {
		for _, c := range []candidate{t.onSpan[i], t.onResource[i]} {
			if c.found {
				t.Group, t.GroupFound = c.value, true
				return
			}
		}
	}
}
