// SPDX-License-Identifier: Apache-2.0

// Package sequence turns the spans of one or more traces into each trace's
// ordered sampling events and the key of the group (a trace, or a
// conversation across traces) the trace belongs to.
//
// It does not import the predicate package: the caller passes a Classifier,
// typically a closure over a compiled predicate set, e.g.
//
//	classify := func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) (bool, uint64) {
//		ok, sig := set.Eval(rs, ss, sp)
//		return ok, uint64(sig)
//	}
//
// Classification is order-independent (spans arrive shuffled); anything that
// depends on order, such as latched predicates, is applied afterwards with
// Fold, once the group's events are merged in order.
package sequence

import (
	"cmp"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/texpr"
)

// ByTraceID as GroupBy makes each trace its own group.
const ByTraceID = "trace_id"

// ByConversation as GroupBy reads the keys of ConversationKeys in order.
const ByConversation = "conversation"

// ConversationKeys is the fallback chain of ByConversation, the first found
// wins: GenAI semconv's conversation id, OpenInference's session id,
// Google ADK's session id (ADK puts gen_ai.conversation.id on invoke_agent
// spans only, and its session id on call_llm spans), then the Traceloop
// SDK's session_id association property (on every span of a workflow).
func ConversationKeys() []string {
	return []string{"gen_ai.conversation.id", "session.id", "gcp.vertex.agent.session_id", "traceloop.association.properties.session_id"}
}

// groupKeys are the attribute keys a GroupBy reads, in order of preference.
func groupKeys(groupBy string) []string {
	switch groupBy {
	case ByTraceID:
		return nil
	case ByConversation:
		return ConversationKeys()
	}
	return []string{groupBy}
}

// Classifier tells whether a span is a sampling event and, if so, its
// order-independent signals (predicate bits before any latch).
type Classifier func(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) (isEvent bool, signals uint64)

// Event is one sampling event.
type Event struct {
	// Span is a handle into the caller's ptrace.Traces: annotations written
	// to it (events, attributes) land in the data that is passed on.
	Span ptrace.Span
	// Start is the span's start time, kept apart for reporting.
	Start pcommon.Timestamp
	// Arrival is the span's position in the order its spans were received
	// (their order in the batch Split read): the tie-break of equal starts.
	Arrival int
	// Read is the span's position in the batch Split read, which the
	// classifier was called in: what a caller keeps per span while Split
	// reads (captures, meter readings) is found by it. Unlike Arrival, the
	// tie-break of equal starts never rewrites it.
	Read int
	// Signals is the Classifier's output.
	Signals uint64
	// Bits is the predicate truth at this event: Signals until Fold sets it.
	Bits uint64
	// Captures are what the capture predicates do here, with a thread's
	// dict (texpr.Captures); nil without capture predicates. The caller's
	// Classifier cannot return them: events.Source sets them after Split.
	Captures texpr.Captures
}

// Trace is one trace's events in order, and its group.
type Trace struct {
	ID pcommon.TraceID
	// Group is the group key: the trace ID in hex for ByTraceID, else the
	// attribute's value as a string; "" when GroupFound is false.
	Group      string
	GroupFound bool
	// Events are the trace's events by start time, then arrival (see
	// Compare); possibly none.
	Events []Event
}

// Compare orders events by start time, then by the order their spans were
// received. End times cannot break a tie: the OpenTelemetry JS SDK takes a
// span's start from Date.now() (whole milliseconds) and its end as that
// truncated start plus a precise duration, so each end is early by its own
// lost fraction of a millisecond, and two calls started in one millisecond
// would be ordered by their durations. SDK batch processors queue spans as
// they end, so the order received is the order they ended. Span and trace
// IDs make the order total for events of one arrival position (events of
// different batches merged).
func Compare(a, b Event) int {
	return cmp.Or(
		cmp.Compare(a.Start, b.Start),
		cmp.Compare(a.Arrival, b.Arrival),
		compareIDs(a.Span.SpanID(), b.Span.SpanID()),
		compareIDs(a.Span.TraceID(), b.Span.TraceID()),
	)
}

func compareIDs[ID pcommon.SpanID | pcommon.TraceID](a, b ID) int {
	for i := range len(a) {
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// Split groups the spans of td by trace and returns each trace's events in
// order and its group key under groupBy: ByTraceID, ByConversation, or an
// attribute key; an attribute's first value by span start order, on a span's
// own attributes, else on a span's resource (an empty value is absent).
// Traces come ordered by their earliest span, then trace ID; a trace
// without events is returned too, so that the caller still learns its group.
func Split(td ptrace.Traces, classify Classifier, groupBy string) []Trace {
	b := builder{td: td, groupBy: groupBy, keys: groupKeys(groupBy), traces: map[pcommon.TraceID]*building{}}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				b.add(rs, ss, sp, classify)
			}
		}
	}
	return b.finish()
}

// Merge returns the events of several traces of one group in one order.
func Merge(seqs ...[]Event) []Event {
	var n int
	for _, s := range seqs {
		n += len(s)
	}
	out := make([]Event, 0, n)
	for _, s := range seqs {
		out = append(out, s...)
	}
	slices.SortStableFunc(out, Compare)
	return out
}

// Fold sets each event's Bits from its Signals by step, called in order:
// step is where per-group state such as latches advances.
func Fold(events []Event, step func(signals uint64) uint64) {
	for i := range events {
		events[i].Bits = step(events[i].Signals)
	}
}
