package temporalcheck

import (
	"bytes"
	"cmp"
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/tracebuffer"
)

// eventSource turns a released trace into its group key and its events in
// order, with the predicates' truth at each.
type eventSource struct {
	set     *predicate.Set
	groupBy string
	latches map[string]*predicate.Latch // per open group, for latched predicates
	errors  int                         // OTTL errors since the last extract
}

func newEventSource(cfg *Config, ts component.TelemetrySettings) (*eventSource, error) {
	s := &eventSource{groupBy: cfg.GroupBy, latches: map[string]*predicate.Latch{}}
	set, err := predicate.Compile(cfg.Config, predicate.Settings{
		Telemetry: ts,
		OnError:   func(string, error) { s.errors++ },
	})
	if err != nil {
		return nil, err
	}
	s.set = set
	return s, nil
}

// candidate is a sampling event before ordering.
type candidate struct {
	span ptrace.Span
	sig  predicate.Signals
}

// extract returns the trace's group, its events ordered by start time (ties:
// end time, then span ID), and how many OTTL errors evaluating them raised.
func (s *eventSource) extract(t *tracebuffer.Trace) (key string, events []assertion.Event, errs int) {
	var cands []candidate
	for _, rs := range t.Spans.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				if isEvent, sig := s.set.Eval(rs, ss, span); isEvent {
					cands = append(cands, candidate{span, sig})
				}
			}
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int { return compareSpans(a.span, b.span) })
	key = s.groupKey(t)
	latch := s.latch(key)
	events = make([]assertion.Event, len(cands))
	for i, c := range cands {
		events[i] = assertion.Event{Bits: uint64(latch.Step(c.sig)), Time: int64(c.span.StartTimestamp()), Name: c.span.Name(), Span: c.span}
	}
	errs, s.errors = s.errors, 0
	return key, events, errs
}

// compareSpans orders spans by start time, then end time, then span ID: ADK
// start times are whole milliseconds, so ties are common.
func compareSpans(a, b ptrace.Span) int {
	if c := cmp.Compare(a.StartTimestamp(), b.StartTimestamp()); c != 0 {
		return c
	}
	if c := cmp.Compare(a.EndTimestamp(), b.EndTimestamp()); c != 0 {
		return c
	}
	aid, bid := a.SpanID(), b.SpanID()
	return bytes.Compare(aid[:], bid[:])
}

// groupKey is the trace ID, or the first value of the group_by attribute on
// any of the trace's spans (earliest first) or resources. A trace without it
// is a group of its own.
func (s *eventSource) groupKey(t *tracebuffer.Trace) string {
	if s.groupBy == GroupByTrace {
		return t.ID.String()
	}
	var best ptrace.Span
	found, value := false, ""
	for _, rs := range t.Spans.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				v, ok := span.Attributes().Get(s.groupBy)
				if ok && (!found || compareSpans(span, best) < 0) {
					best, found, value = span, true, v.AsString()
				}
			}
		}
	}
	if found {
		return value
	}
	for _, rs := range t.Spans.ResourceSpans().All() {
		if v, ok := rs.Resource().Attributes().Get(s.groupBy); ok {
			return v.AsString()
		}
	}
	return t.ID.String()
}

// latch is the group's latched-predicate state; a per-trace group starts
// fresh every time.
func (s *eventSource) latch(key string) *predicate.Latch {
	if s.groupBy == GroupByTrace {
		l := s.set.NewLatch()
		return &l
	}
	l, ok := s.latches[key]
	if !ok {
		nl := s.set.NewLatch()
		l = &nl
		s.latches[key] = l
	}
	return l
}

// forget drops an ended group's latch state.
func (s *eventSource) forget(key string) { delete(s.latches, key) }
