// SPDX-License-Identifier: Apache-2.0

// Package events turns spans into the sampling events of their groups, the
// predicates evaluated and the latched ones advanced in order: the one
// sequencing temporalcheck, probguard and the offline commands share, so that
// a model learned offline sees exactly the events a processor sees live.
package events

import (
	"slices"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/core/sequence"
)

// Source classifies spans with a compiled predicate set. It keeps no state
// per group: a group's latches are its owner's (see NewLatch). It is not safe
// for concurrent use (OTTL evaluation reuses its buffers): a processor makes
// one Source per worker.
type Source struct {
	set     *predicate.Set
	groupBy string
	errors  Errors // OTTL errors since the last call
	silent  bool   // error_mode silent: errors are counted, not reported
	// With capture predicates, what they read at each span of the batch
	// Split is reading, by arrival (nil where none held): classify fills it
	// and attach hands it to the events, so that a span's JSON is read once.
	captures bool
	arrived  []*predicate.Captured
	// With meters (budgets, repeats), what they read at each span, by
	// arrival, until the fold: a silent span (no event, but measured) stays
	// an event only where a meter holds there.
	meters    bool
	meterBits uint64
	measured  []measured
}

type measured struct {
	m      *predicate.Measurement
	silent bool
}

// Errors are the OTTL evaluation errors of one call: how many, and the first
// error of each predicate that raised one, to log (none under error_mode
// silent).
type Errors struct {
	Count int
	First map[string]error
}

// Group is one group's events in sequence order.
type Group struct {
	Key    string
	Events []sequence.Event
}

// NewSource compiles the predicates; groupBy is as sequence.Split takes it.
func NewSource(cfg predicate.Config, groupBy string, ts component.TelemetrySettings) (*Source, error) {
	s := &Source{groupBy: groupBy, silent: cfg.ErrorMode == ottl.SilentError}
	set, err := predicate.Compile(cfg, predicate.Settings{
		Telemetry: ts,
		OnError:   s.onError,
	})
	if err != nil {
		return nil, err
	}
	s.set = set
	s.captures = set.Captures() != 0
	s.meters, s.meterBits = set.HasMeters(), set.MeterBits()
	return s, nil
}

// Captures are the bits of the capture predicates (predicate.Config.Captures).
func (s *Source) Captures() uint64 { return s.set.Captures() }

// Names are the predicates in bit order.
func (s *Source) Names() []string { return s.set.Names() }

// NewLatch is the latched predicates' state at the start of a group.
func (s *Source) NewLatch() predicate.Latch { return s.set.NewLatch() }

func (s *Source) classify(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, span ptrace.Span) (bool, uint64) {
	if !s.captures && !s.meters {
		isEvent, sig := s.set.Eval(rs, ss, span)
		return isEvent, uint64(sig)
	}
	r := s.set.Read(rs, ss, span)
	// Split reads the spans in arrival order.
	if s.captures {
		s.arrived = append(s.arrived, r.Captured)
	}
	if s.meters {
		s.measured = append(s.measured, measured{r.Measured, r.Silent})
	}
	return r.IsEvent, uint64(r.Signals)
}

// fold sets the events' Bits, the latch stepped through them in order, and
// drops the silent events where no meter holds.
func (s *Source) fold(evs []sequence.Event, latch *predicate.Latch) []sequence.Event {
	if !s.meters {
		sequence.Fold(evs, func(sig uint64) uint64 { return uint64(latch.Step(predicate.Signals(sig))) })
		return evs
	}
	kept := evs[:0]
	for _, ev := range evs {
		m := s.measured[ev.Read]
		ev.Bits = uint64(latch.StepEvent(predicate.Signals(ev.Signals), m.m, ev.Span, m.silent))
		if !m.silent || ev.Bits&s.meterBits != 0 {
			kept = append(kept, ev)
		}
	}
	clear(kept[len(kept):len(evs)]) // no span handle kept alive past the slice
	return kept
}

func (s *Source) forgetMeasured() {
	clear(s.measured)
	s.measured = s.measured[:0]
}

// split is sequence.Split with each event's captures attached.
func (s *Source) split(td ptrace.Traces, groupBy string) []sequence.Trace {
	traces := sequence.Split(td, s.classify, groupBy)
	if !s.captures {
		return traces
	}
	for _, tr := range traces {
		for i := range tr.Events {
			if c := s.arrived[tr.Events[i].Read]; c != nil {
				tr.Events[i].Captures = c
			}
		}
	}
	clear(s.arrived)
	s.arrived = s.arrived[:0]
	return traces
}

// Extract returns the events of a chunk of one group's spans (a complete
// trace, or late spans of its traces) in sequence order, with the group's
// latch advanced over them, and how many OTTL errors evaluating them raised.
// The events' spans are handles into td.
func (s *Source) Extract(td ptrace.Traces, latch *predicate.Latch) (evs []sequence.Event, errs Errors) {
	traces := s.split(td, sequence.ByTraceID)
	if len(traces) == 1 {
		evs = traces[0].Events
	} else {
		seqs := make([][]sequence.Event, len(traces))
		for i, tr := range traces {
			seqs[i] = tr.Events
		}
		evs = sequence.Merge(seqs...)
	}
	evs = s.fold(evs, latch)
	s.forgetMeasured()
	return evs, s.takeErrors()
}

// Groups returns every group of recorded traces, each over all its traces in
// order, sorted by key, and the OTTL errors raised; a trace without the
// group_by attribute is a group of its own, keyed by its trace ID. The
// traces are moved into one batch first, so that a trace split over several
// requests stays one trace, and the order of the files and of the spans in
// them is the order received: tds are left empty.
func (s *Source) Groups(tds []ptrace.Traces) (groups []Group, errs Errors) {
	all := ptrace.NewTraces()
	for _, td := range tds {
		td.ResourceSpans().MoveAndAppendTo(all.ResourceSpans())
	}
	var keys []string
	byKey := map[string][][]sequence.Event{}
	for _, tr := range s.split(all, s.groupBy) {
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
	groups = make([]Group, 0, len(keys))
	for _, key := range keys {
		evs := sequence.Merge(byKey[key]...)
		latch := s.set.NewLatch()
		groups = append(groups, Group{Key: key, Events: s.fold(evs, &latch)})
	}
	s.forgetMeasured()
	return groups, s.takeErrors()
}

func (s *Source) onError(predicate string, err error) {
	s.errors.Count++
	if s.silent {
		return
	}
	if s.errors.First == nil {
		s.errors.First = map[string]error{}
	}
	if _, ok := s.errors.First[predicate]; !ok {
		s.errors.First[predicate] = err
	}
}

func (s *Source) takeErrors() Errors {
	e := s.errors
	s.errors = Errors{}
	return e
}
