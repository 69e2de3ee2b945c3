// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/core/sequence"
)

// Hypothesis is what a question about one group sees on the worker that
// owns it: the group's state as judged so far, and the events a proposed
// action would be, classified by the same predicates as the spans, from the
// group's latches. Nothing of it may be kept: the state goes on changing
// once the question is answered.
type Hypothesis[G any] struct {
	// Open is false for a group the stage does not hold (never seen, or
	// ended): State is then the zero G, Events are classified from a new
	// group's latches, and History is what a new group of key would be
	// marked (partial when key was forgotten, or in the warm-up).
	Open bool
	// Fresh: the group is not open and the stage judges spans as they
	// arrive, so the action would be the first events of a new group. Judged
	// when complete, a group not open may have a trace held, not yet judged,
	// that comes before the action: it cannot be judged as new.
	Fresh   bool
	State   G
	History History
	// Events are the proposed action's events (none when no predicate's
	// events condition selects it); Matched names the predicates that hold
	// at them.
	Events  []sequence.Event
	Matched []string
}

// ErrNotJudged is Ask's error when the span it was to wait for was not
// judged before its context ended.
var ErrNotJudged = errors.New("the span asked after was not judged in time")

// Ask classifies action as the next spans of group key and calls answer
// with what it would be, on the worker that owns the group, after the work
// handed to that worker before it, so that the answer covers every span
// taken in before. With after (not empty), it first waits until the span
// of that ID has been judged (Config.RememberJudged). Neither the group's
// state nor its latches change: the action is classified from a copy of
// them, and answer must only read. Ask returns ctx's error, or
// ErrNotJudged, if ctx ends first; answer may then still run later, and must
// not rely on the caller waiting for it.
func (s *Stage[G]) Ask(ctx context.Context, key string, after pcommon.SpanID, action ptrace.Traces, answer func(Hypothesis[G])) error {
	s.ensureWorkers()
	if !after.IsEmpty() && s.cfg.RememberJudged <= 0 {
		return errors.New("this processor does not remember the spans it judged: it cannot wait for one")
	}
	wait := time.Millisecond
	for {
		answered, err := s.askOnce(ctx, key, after, action, answer)
		if err != nil || answered {
			return err
		}
		select {
		case <-ctx.Done():
			return ErrNotJudged
		case <-time.After(wait):
		}
		wait = min(2*wait, 20*time.Millisecond)
	}
}

// askOnce puts the question to the worker; answered is false when the span
// asked after is not judged yet.
func (s *Stage[G]) askOnce(ctx context.Context, key string, after pcommon.SpanID, action ptrace.Traces, answer func(Hypothesis[G])) (bool, error) {
	done := make(chan bool, 1)
	q := func(w *worker[G]) {
		if !after.IsEmpty() && !w.judged.has(after) {
			done <- false
			return
		}
		answer(w.hypothesis(key, action))
		done <- true
	}
	s.workers[s.workerOf(key)].in.put(work[G]{query: q})
	select {
	case answered := <-done:
		return answered, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// hypothesis classifies action for group key, as the worker would judge it
// next, without changing the group.
func (w *worker[G]) hypothesis(key string, action ptrace.Traces) Hypothesis[G] {
	var h Hypothesis[G]
	latch := w.src.NewLatch()
	g, ok := w.groups.Get(key)
	if !ok {
		// A group in its saved form is rebuilt for the question only: a
		// dormant one stays dormant, and one ended idle and kept (retention,
		// or a trace of its own ended at its release) stays kept, as the
		// next trace of it would take it up; a question is not activity.
		if data, dormant, saved := w.savedForm(key); saved {
			g, ok = w.rebuildForQuestion(key, data)
			if !dormant {
				w.forget(key) // it stays ended: what the rebuild opened for it goes
			}
		}
	}
	if ok {
		h.Open, h.State, h.History, latch = true, g.state, g.history, g.latch.Clone()
		if g.service != nil {
			setService(action, *g.service)
		}
	} else {
		h.Fresh = w.s.cfg.OnArrival
		if w.forgotten.has(key) || w.s.warm.on(w.s.now()) {
			h.History = HistoryPartial // as the group the action would open will be marked
		}
	}
	h.Events, _ = w.src.Extract(action, &latch) // an OTTL error makes its predicate false, as live
	names := w.src.Names()
	for _, ev := range h.Events {
		for i, name := range names {
			if ev.Bits&(1<<uint(i)) != 0 {
				h.Matched = append(h.Matched, name)
			}
		}
	}
	return h
}

// savedForm is the saved form of a group the worker holds only so: dormant
// (open), or ended and kept for a later trace to continue.
func (w *worker[G]) savedForm(key string) (data []byte, dormant, ok bool) {
	if data, ok := w.dormant.Get(key); ok {
		return data, true, true
	}
	for _, kept := range []*Recent[[]byte]{w.retained, w.released} {
		if data, ok := kept.Get(key); ok {
			return data, false, true
		}
	}
	return nil, false, false
}

// setService gives the action's resources the group's service.name, where
// they have none: a predicate or events condition may read it.
func setService(td ptrace.Traces, service string) {
	for _, rs := range td.ResourceSpans().All() {
		attrs := rs.Resource().Attributes()
		if _, ok := attrs.Get("service.name"); !ok {
			attrs.PutStr("service.name", service)
		}
	}
}
