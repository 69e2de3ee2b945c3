package temporalcheck

import (
	"go.opentelemetry.io/collector/component"

	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/events"
	"github.com/agentguard/agentguard/internal/core/tracebuffer"
)

// eventSource turns a released trace into its group key and its events in
// order, with the predicates' truth at each, as the assertion runner takes
// them.
type eventSource struct {
	src *events.Source
}

func newEventSource(cfg *Config, ts component.TelemetrySettings) (*eventSource, error) {
	src, err := events.NewSource(cfg.Config, cfg.GroupBy, ts)
	if err != nil {
		return nil, err
	}
	return &eventSource{src: src}, nil
}

// extract returns the trace's group, its events in sequence order with the
// latches advanced, and how many OTTL errors evaluating them raised.
func (s *eventSource) extract(t *tracebuffer.Trace) (key string, evs []assertion.Event, errs int) {
	key, seq, errs := s.src.Extract(t.Spans, t.ID)
	evs = make([]assertion.Event, len(seq))
	for i, ev := range seq {
		evs[i] = assertion.Event{Bits: ev.Bits, Time: int64(ev.Start), Name: ev.Span.Name(), Span: ev.Span}
	}
	return key, evs, errs
}

// forget drops an ended group's latch state.
func (s *eventSource) forget(key string) { s.src.Forget(key) }
