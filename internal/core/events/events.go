// Package events turns traces into the sampling events of their groups, the
// predicates evaluated and the latched ones advanced in order: the one
// sequencing temporalcheck, probguard and the offline commands share, so that
// a model learned offline sees exactly the events a processor sees live.
package events

import (
	"slices"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
)

// Source classifies spans with a compiled predicate set and keeps, per open
// group, the state of its latched predicates. It is not safe for concurrent
// use.
type Source struct {
	set     *predicate.Set
	groupBy string
	latches map[string]*predicate.Latch // per open group of an attribute group_by
	errors  int                         // OTTL errors since the last call
}

// Group is one group's events in sequence order.
type Group struct {
	Key    string
	Events []sequence.Event
}

// NewSource compiles the predicates; groupBy is as sequence.Split takes it.
func NewSource(cfg predicate.Config, groupBy string, ts component.TelemetrySettings) (*Source, error) {
	s := &Source{groupBy: groupBy, latches: map[string]*predicate.Latch{}}
	set, err := predicate.Compile(cfg, predicate.Settings{
		Telemetry: ts,
		OnError:   func(string, error) { s.errors++ },
	})
	if err != nil {
		return nil, err
	}
	s.set = set
	return s, nil
}

// Names are the predicates in bit order.
func (s *Source) Names() []string { return s.set.Names() }

// PerTrace reports whether every trace is a group of its own.
func (s *Source) PerTrace() bool { return s.groupBy == sequence.ByTraceID }

func (s *Source) classify(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) (bool, uint64) {
	isEvent, sig := s.set.Eval(rs, ss, span)
	return isEvent, uint64(sig)
}

// Extract returns a complete trace's group (the trace ID when the group_by
// attribute is nowhere on it), its events in order with the group's latches
// advanced, and how many OTTL errors evaluating them raised. The events'
// spans are handles into td.
func (s *Source) Extract(td ptrace.Traces, id pcommon.TraceID) (key string, evs []sequence.Event, errs int) {
	key = id.String()
	for _, tr := range sequence.Split(td, s.classify, s.groupBy) {
		if tr.GroupFound {
			key = tr.Group
		}
		evs = append(evs, tr.Events...)
	}
	latch := s.latch(key)
	sequence.Fold(evs, func(sig uint64) uint64 { return uint64(latch.Step(predicate.Signals(sig))) })
	return key, evs, s.takeErrors()
}

// Groups returns every group of recorded traces, each over all its traces in
// order, sorted by key, and the OTTL errors raised. The traces are moved into
// one batch first, so that a trace split over several requests stays one
// trace: tds are left empty.
func (s *Source) Groups(tds []ptrace.Traces) (groups []Group, errs int) {
	all := ptrace.NewTraces()
	for _, td := range tds {
		td.ResourceSpans().MoveAndAppendTo(all.ResourceSpans())
	}
	return s.groups(all, func(string) *predicate.Latch {
		l := s.set.NewLatch()
		return &l
	}), s.takeErrors()
}

// Continue returns the groups of a chunk of traces (a released trace, or
// late spans of several), each group's events in order, its latches carried
// over from the group's earlier chunks: for a processor that scores a group
// as its spans come. Each group's latches are kept until Forget.
func (s *Source) Continue(td ptrace.Traces) (groups []Group, errs int) {
	return s.groups(td, s.openLatch), s.takeErrors()
}

func (s *Source) groups(td ptrace.Traces, latch func(key string) *predicate.Latch) []Group {
	var keys []string
	byKey := map[string][][]sequence.Event{}
	for _, tr := range sequence.Split(td, s.classify, s.groupBy) {
		key := tr.ID.String()
		if tr.GroupFound {
			key = tr.Group
		}
		if _, ok := byKey[key]; !ok {
			keys = append(keys, key)
		}
		byKey[key] = append(byKey[key], tr.Events)
	}
	slices.Sort(keys)
	groups := make([]Group, 0, len(keys))
	for _, key := range keys {
		evs := sequence.Merge(byKey[key]...)
		l := latch(key)
		sequence.Fold(evs, func(sig uint64) uint64 { return uint64(l.Step(predicate.Signals(sig))) })
		groups = append(groups, Group{Key: key, Events: evs})
	}
	return groups
}

func (s *Source) takeErrors() int {
	n := s.errors
	s.errors = 0
	return n
}

// latch is the group's latched-predicate state; a per-trace group starts
// fresh every time.
func (s *Source) latch(key string) *predicate.Latch {
	if s.PerTrace() {
		l := s.set.NewLatch()
		return &l
	}
	return s.openLatch(key)
}

// openLatch is the kept latch state of a group, made on first use.
func (s *Source) openLatch(key string) *predicate.Latch {
	l, ok := s.latches[key]
	if !ok {
		nl := s.set.NewLatch()
		l = &nl
		s.latches[key] = l
	}
	return l
}

// Forget drops an ended group's latch state.
func (s *Source) Forget(key string) { delete(s.latches, key) }
