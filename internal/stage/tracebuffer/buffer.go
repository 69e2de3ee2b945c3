// SPDX-License-Identifier: Apache-2.0

// Package tracebuffer holds the spans of each trace until the trace is
// complete, within bounds, so that a processor can evaluate a whole trace at
// once. Every span that enters leaves exactly once: in a released trace, or
// straight away as a late span of a trace already released.
//
// A Buffer reads no clock and starts no goroutine: every call takes now, so
// its owner injects the clock (time.Now in production, plain values in
// tests, which then need no sleeping), and one owner (one goroutine, or a
// lock) serialises the calls. To use more cores, an owner can hash trace IDs
// to N Buffers, one per goroutine: traces never span two Buffers.
package tracebuffer

import (
	"cmp"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/room"
)

// Config bounds the buffer.
type Config struct {
	Wait             time.Duration // a trace is complete this long after its last new span
	RootWait         time.Duration // ... or this long after its root span arrived (0: only Wait)
	MaxTraces        int           // traces held at most; past it the oldest is released
	MaxSpansPerTrace int           // spans held per trace at most (0: no limit)
	RememberReleased int           // released trace IDs remembered, to recognise late spans
}

// Buffer holds traces. It is not safe for concurrent use: its owner
// serialises Add, Expire and Flush.
type Buffer struct {
	cfg      Config
	traces   map[pcommon.TraceID]*Trace
	peak     int      // the most traces held since traces was made (room.Map)
	arrivals []*Trace // first-arrival order, for eviction; may hold released traces
	waits    fifo     // Wait after each trace's latest arrival
	roots    fifo     // RootWait after each root's arrival
	released recentIDs
	spans    int
	adds     uint64 // Add calls, to mark the traces one call grew
}

// New returns an empty buffer.
func New(cfg Config) *Buffer {
	return &Buffer{cfg: cfg, traces: map[pcommon.TraceID]*Trace{}, released: newRecentIDs(cfg.RememberReleased)}
}

// Len is the number of traces held.
func (b *Buffer) Len() int { return len(b.traces) }

// Spans is the number of spans held.
func (b *Buffer) Spans() int { return b.spans }

// Add takes the spans of td (td is emptied). Spans of traces released
// recently come back at once in late; traces that a bound forces out come back
// in out.
func (b *Buffer) Add(td ptrace.Traces, now time.Time) (late ptrace.Traces, lateSpans int, out []*Trace) {
	late = ptrace.NewTraces()
	b.adds++
	var in intake
	forEachScope(td, func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans) {
		if id, ok := oneTrace(ss.Spans()); ok {
			// The usual case: the whole scope moves at once, no span copied.
			dst := b.destination(id, late, rs, ss, now)
			ss.Spans().MoveAndAppendTo(dst)
			for _, span := range dst.All() {
				b.account(&in, id, span, now)
			}
			return
		}
		dest := map[pcommon.TraceID]ptrace.SpanSlice{}
		ss.Spans().RemoveIf(func(span ptrace.Span) bool {
			id := span.TraceID()
			slice, ok := dest[id]
			if !ok {
				slice = b.destination(id, late, rs, ss, now)
				dest[id] = slice
			}
			moved := slice.AppendEmpty()
			span.MoveTo(moved)
			b.account(&in, id, moved, now)
			return true
		})
	})
	lateSpans, grown := in.lateSpans, in.grown
	for _, t := range grown {
		if b.cfg.MaxSpansPerTrace > 0 && t.Count > b.cfg.MaxSpansPerTrace {
			out = append(out, b.release(t, Oversize))
			continue
		}
		b.waits.push(deadline{at: now.Add(b.cfg.Wait), trace: t, stamp: now})
	}
	return late, lateSpans, append(out, b.evict()...)
}

// intake is what one Add has taken so far.
type intake struct {
	lateSpans int
	grown     []*Trace // the traces this Add grew, once each
}

// account counts a span just moved to its trace or to the late spans.
func (b *Buffer) account(in *intake, id pcommon.TraceID, span ptrace.Span, now time.Time) {
	if b.released.has(id) {
		in.lateSpans++
		return
	}
	if t := b.arrived(id, span.ParentSpanID().IsEmpty(), span.StartTimestamp(), now); t.touched != b.adds {
		t.touched = b.adds
		in.grown = append(in.grown, t)
	}
}

// oneTrace reports whether all spans belong to one trace, and which.
func oneTrace(spans ptrace.SpanSlice) (pcommon.TraceID, bool) {
	if spans.Len() == 0 {
		return pcommon.TraceID{}, false
	}
	id := spans.At(0).TraceID()
	for i := 1; i < spans.Len(); i++ {
		if spans.At(i).TraceID() != id {
			return id, false
		}
	}
	return id, true
}

// destination is the span slice of a new scope, under the trace (or the late
// spans) the span belongs to, with a copy of the span's resource and scope.
func (b *Buffer) destination(id pcommon.TraceID, late ptrace.Traces, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, now time.Time) ptrace.SpanSlice {
	target := late
	if !b.released.has(id) {
		t, ok := b.traces[id]
		if !ok {
			t = &Trace{ID: id, Spans: ptrace.NewTraces(), first: now}
			b.traces[id] = t
			b.peak = max(b.peak, len(b.traces))
			b.arrivals = append(b.arrivals, t)
		}
		target = t.Spans
	}
	drs := target.ResourceSpans().AppendEmpty()
	rs.Resource().CopyTo(drs.Resource())
	drs.SetSchemaUrl(rs.SchemaUrl())
	dss := drs.ScopeSpans().AppendEmpty()
	ss.Scope().CopyTo(dss.Scope())
	dss.SetSchemaUrl(ss.SchemaUrl())
	return dss.Spans()
}

func (b *Buffer) arrived(id pcommon.TraceID, isRoot bool, start pcommon.Timestamp, now time.Time) *Trace {
	t := b.traces[id]
	if t.Count == 0 || start < t.start {
		t.start = start
	}
	t.Count++
	t.last = now
	if isRoot && !t.hasRoot {
		t.root, t.hasRoot = now, true
		if b.cfg.RootWait > 0 {
			b.roots.push(deadline{at: now.Add(b.cfg.RootWait), trace: t})
		}
	}
	b.spans++
	return t
}

// evict releases the oldest traces while more than MaxTraces are held.
func (b *Buffer) evict() []*Trace {
	var out []*Trace
	for len(b.traces) > b.cfg.MaxTraces && b.cfg.MaxTraces > 0 {
		t := b.arrivals[0]
		b.arrivals[0] = nil
		b.arrivals = b.arrivals[1:]
		if b.holds(t) {
			out = append(out, b.release(t, Evicted))
		}
	}
	return out
}

// holds reports whether t is held: not released, and not an earlier trace of
// the same ID (an ID forgotten by the late-span memory can come back).
func (b *Buffer) holds(t *Trace) bool { return b.traces[t.ID] == t }

// Expire releases the traces that are complete at now, in the order they
// started: Wait after their latest span arrived, or RootWait after their root
// did. now must not go backwards from one call to the next.
func (b *Buffer) Expire(now time.Time) []*Trace {
	var out []*Trace
	b.waits.popDue(now, func(d deadline) {
		// Two Adds at one instant queue two entries of the same stamp: due
		// takes the first only.
		if b.holds(d.trace) && d.trace.last.Equal(d.stamp) && !d.trace.due {
			d.trace.due = true
			d.trace.Reason = Complete
			out = append(out, d.trace)
		}
	})
	b.roots.popDue(now, func(d deadline) {
		if b.holds(d.trace) && !d.trace.due { // complete and root-due at once: complete
			d.trace.due = true
			d.trace.Reason = RootDone
			out = append(out, d.trace)
		}
	})
	sortByStart(out)
	for _, t := range out {
		b.release(t, t.Reason)
	}
	b.compactArrivals()
	return out
}

// Held is the trace of id if it is held, else nil.
func (b *Buffer) Held(id pcommon.TraceID) *Trace { return b.traces[id] }

// Each calls f with every trace held, in no order; f must not add or take.
func (b *Buffer) Each(f func(*Trace)) {
	for _, t := range b.traces {
		f(t)
	}
}

// Take releases a held trace now, before it is due: an owner that judges
// spans as they arrive takes each trace as soon as it knows its group. The
// trace's later spans come back from Add as late.
func (b *Buffer) Take(t *Trace) {
	if b.holds(t) {
		b.release(t, Taken)
	}
}

// Flush releases every trace held, in the order they started.
func (b *Buffer) Flush() []*Trace {
	out := make([]*Trace, 0, len(b.traces))
	for _, t := range b.traces {
		out = append(out, t)
	}
	sortByStart(out)
	for _, t := range out {
		b.release(t, Shutdown)
	}
	clear(b.arrivals)
	b.arrivals = b.arrivals[:0]
	b.waits.reset()
	b.roots.reset()
	return out
}

func (b *Buffer) release(t *Trace, r Reason) *Trace {
	t.Reason = r
	delete(b.traces, t.ID)
	b.traces = room.Map(b.traces, &b.peak)
	b.released.add(t.ID)
	b.released.setTaken(t.ID, r == Taken)
	b.spans -= t.Count
	return t
}

// compactArrivals drops released IDs once they outnumber the held ones, so
// the eviction queue stays proportional to what is held.
func (b *Buffer) compactArrivals() {
	if len(b.arrivals) <= 2*len(b.traces)+64 {
		return
	}
	b.arrivals = slices.DeleteFunc(b.arrivals, func(t *Trace) bool { return !b.holds(t) })
	if room.Spare(len(b.arrivals), cap(b.arrivals)) {
		b.arrivals = append(make([]*Trace, 0, room.Size(len(b.arrivals))), b.arrivals...)
	}
}

// sortByStart orders traces released together by their earliest span, so
// that the turns of a conversation, often exported in one batch, are
// evaluated in the order they happened.
func sortByStart(ts []*Trace) { slices.SortFunc(ts, CompareStart) }

// CompareStart orders traces by their earliest span, then first arrival,
// then ID: the order Expire and Flush release them in, so that traces
// released by several buffers at once can be put in the same order.
func CompareStart(a, b *Trace) int {
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	if c := a.first.Compare(b.first); c != 0 {
		return c
	}
	return slices.Compare(a.ID[:], b.ID[:])
}

func forEachScope(td ptrace.Traces, f func(ptrace.ResourceSpans, ptrace.ScopeSpans)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			f(rs, ss)
		}
	}
}

// File records the group a released trace belongs to, so that its late spans
// can be given to that group (see GroupOf).
func (b *Buffer) File(id pcommon.TraceID, group string) { b.released.file(id, group) }

// Refresh remembers a released trace's ID anew, with its group, as if it
// were released now: an owner that takes traces on arrival calls it for each
// later batch of one, so that a trace still sending is not forgotten while
// others are released.
func (b *Buffer) Refresh(id pcommon.TraceID) {
	if b.released.has(id) {
		b.released.add(id)
	}
}

// Taken reports whether a remembered released trace was taken by its owner
// (Take): its later spans follow its first as batches do, not late.
func (b *Buffer) Taken(id pcommon.TraceID) bool { return b.released.taken(id) }

// GroupOf is the group a remembered released trace was filed under.
func (b *Buffer) GroupOf(id pcommon.TraceID) (string, bool) { return b.released.group(id) }
