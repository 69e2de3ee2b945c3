// SPDX-License-Identifier: Apache-2.0

package sequence

import (
	"cmp"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// position is where a span stands in sequence order: its start, then its
// arrival.
type position struct {
	start   pcommon.Timestamp
	arrival int
}

func (p position) before(q position) bool {
	return cmp.Or(cmp.Compare(p.start, q.start), cmp.Compare(p.arrival, q.arrival)) < 0
}

// candidate is a group key value seen at one span; the earliest span wins,
// so that the key does not depend on which batch or resource came first.
type candidate struct {
	at    position
	value string
	found bool
}

// offer takes the value if it is the earliest so far. An empty value counts
// as absent: it would merge unrelated traces into one group "".
func (c *candidate) offer(at position, v pcommon.Value, ok bool) {
	if !ok || (c.found && !at.before(c.at)) {
		return
	}
	if value := v.AsString(); value != "" {
		*c = candidate{at: at, value: value, found: true}
	}
}

// groupKey collects one trace's group key candidates: per attribute key in
// order of preference, the value found on a span's own attributes wins over
// one found on a resource (the span's is more specific: in ADK only
// invoke_agent spans carry gen_ai.conversation.id).
type groupKey struct {
	onSpan, onResource []candidate
}

func newGroupKey(keys []string) groupKey {
	return groupKey{onSpan: make([]candidate, len(keys)), onResource: make([]candidate, len(keys))}
}

func (g *groupKey) offer(keys []string, rs ptrace.ResourceSpans, sp ptrace.Span, at position) {
	for i, key := range keys {
		v, ok := sp.Attributes().Get(key)
		g.onSpan[i].offer(at, v, ok)
		v, ok = rs.Resource().Attributes().Get(key)
		g.onResource[i].offer(at, v, ok)
	}
}

func (g *groupKey) value() (string, bool) {
	for i := range g.onSpan {
		for _, c := range []candidate{g.onSpan[i], g.onResource[i]} {
			if c.found {
				return c.value, true
			}
		}
	}
	return "", false
}

// building is one trace while Split reads the batch.
type building struct {
	Trace
	first    position // earliest span, to order the traces
	hasFirst bool
	key      groupKey
}

type builder struct {
	td      ptrace.Traces // the batch: its spans' parents settle ties
	groupBy string
	keys    []string // the attribute keys groupBy reads
	traces  map[pcommon.TraceID]*building
	arrived int // spans read so far
}

func (b *builder) add(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span, classify Classifier) {
	t := b.trace(sp)
	at := position{start: sp.StartTimestamp(), arrival: b.arrived}
	b.arrived++
	if !t.hasFirst || at.before(t.first) {
		t.first, t.hasFirst = at, true
	}
	t.key.offer(b.keys, rs, sp, at)
	if ok, sig := classify(rs, ss, sp); ok {
		t.Events = append(t.Events, Event{Span: sp, Start: at.start, Arrival: at.arrival, Read: at.arrival, Signals: sig, Bits: sig})
	}
}

func (b *builder) trace(sp ptrace.Span) *building {
	id := sp.TraceID()
	t, ok := b.traces[id]
	if !ok {
		t = &building{Trace: Trace{ID: id}, key: newGroupKey(b.keys)}
		b.traces[id] = t
	}
	return t
}

func (b *builder) finish() []Trace {
	all := make([]*building, 0, len(b.traces))
	for _, t := range b.traces {
		slices.SortFunc(t.Events, Compare)
		parentsFirst(t.Events, b.td)
		t.setGroup(b.groupBy)
		all = append(all, t)
	}
	slices.SortFunc(all, func(x, y *building) int {
		return cmp.Or(cmp.Compare(x.first.start, y.first.start), cmp.Compare(x.first.arrival, y.first.arrival))
	})
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
	t.Group, t.GroupFound = t.key.value()
}

// GroupOf is the group key of a batch holding one trace's spans under
// groupBy, as Split would give it, without classifying any span: what a
// processor needs to route a complete trace to the worker of its group.
func GroupOf(td ptrace.Traces, groupBy string) (key string, found bool) {
	keys := groupKeys(groupBy)
	if len(keys) == 0 {
		return "", false
	}
	g := newGroupKey(keys)
	arrived := 0
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				g.offer(keys, rs, sp, position{start: sp.StartTimestamp(), arrival: arrived})
				arrived++
			}
		}
	}
	return g.value()
}

// parentsFirst puts, among events that start at the same time, each one
// before the events it encloses: a parent ends after its children, so an
// SDK exports it after them, and a span and its first child often start in
// one millisecond. Events that do not enclose one another keep their order.
func parentsFirst(evs []Event, td ptrace.Traces) {
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && evs[j].Start == evs[i].Start {
			j++
		}
		if j-i > 1 {
			orderTies(evs[i:j], parentsIn(td, evs[i].Span.TraceID()))
		}
		i = j
	}
}

// parentsIn maps each span of trace id in td to its parent: read only
// when events tie, which costs a batch without ties nothing.
func parentsIn(td ptrace.Traces, id pcommon.TraceID) map[pcommon.SpanID]pcommon.SpanID {
	parent := map[pcommon.SpanID]pcommon.SpanID{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if sp.TraceID() == id {
					parent[sp.SpanID()] = sp.ParentSpanID()
				}
			}
		}
	}
	return parent
}

// orderTies orders one run of events of equal start: repeatedly the first
// event none of whose ancestors is still waiting. The run's arrival
// positions are dealt out again in the new order, so that Compare (and
// Merge, which sorts by it) keeps it.
func orderTies(run []Event, parent map[pcommon.SpanID]pcommon.SpanID) {
	arrivals := make([]int, len(run))
	for k, ev := range run {
		arrivals[k] = ev.Arrival
	}
	waiting := slices.Clone(run)
	for k := range run {
		next := 0 // the first waiting, should the links loop
		for i, ev := range waiting {
			if !hasAncestorIn(ev, waiting, parent) {
				next = i
				break
			}
		}
		run[k] = waiting[next]
		run[k].Arrival = arrivals[k]
		waiting = slices.Delete(waiting, next, next+1)
	}
}

// hasAncestorIn reports whether an event of others encloses ev.
func hasAncestorIn(ev Event, others []Event, parent map[pcommon.SpanID]pcommon.SpanID) bool {
	seen := 0
	for id := ev.Span.ParentSpanID(); !id.IsEmpty() && seen <= len(parent); id = parent[id] {
		for _, o := range others {
			if o.Span.SpanID() == id {
				return true
			}
		}
		seen++
	}
	return false
}
