package temporalcheck

import (
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
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

func (s *eventSource) classify(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) (bool, uint64) {
	isEvent, sig := s.set.Eval(rs, ss, span)
	return isEvent, uint64(sig)
}

// extract returns the trace's group (the trace ID when the group_by
// attribute is nowhere on it), its events in sequence order with the
// latches advanced, and how many OTTL errors evaluating them raised.
func (s *eventSource) extract(t *tracebuffer.Trace) (key string, events []assertion.Event, errs int) {
	key = t.ID.String()
	var seq []sequence.Event
	for _, tr := range sequence.Split(t.Spans, s.classify, s.groupBy) {
		if tr.GroupFound {
			key = tr.Group
		}
		seq = append(seq, tr.Events...)
	}
	latch := s.latch(key)
	sequence.Fold(seq, func(sig uint64) uint64 { return uint64(latch.Step(predicate.Signals(sig))) })
	events = make([]assertion.Event, len(seq))
	for i, ev := range seq {
		events[i] = assertion.Event{Bits: ev.Bits, Time: int64(ev.Start), Name: ev.Span.Name(), Span: ev.Span}
	}
	errs, s.errors = s.errors, 0
	return key, events, errs
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
