// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/checkpoint"
	"github.com/agentguard/agentguard/internal/core/sequence"
	"github.com/agentguard/agentguard/internal/stage/tracebuffer"
)

// In a tier behind a load-balancing router, a rescale moves conversations
// from one collector to another in mid-course: the new one would judge
// their later turns without the earlier ones, and miss what spans both. So
// a stage in a tier asks the tier, for each group of an attribute it has
// never seen, whether another collector holds it, and takes it over: the
// holder gives up the group in its saved form (as a checkpoint holds it),
// and the group goes on here where it was. If a member cannot answer, the
// group may have been held there: it starts afresh, marked partial (reason
// rescale).

// Tier is the rest of a stage's tier, as its decisions endpoint knows it.
type Tier interface {
	// TakeOver asks the other collectors for group key, saved under a
	// configuration of this fingerprint, and has the one that holds it give
	// it up. found is false when none does; err says that a member did not
	// answer (one of them may have held it).
	TakeOver(ctx context.Context, key, fingerprint string) (saved []byte, found bool, err error)
}

// takeOverTimeout bounds how long a worker waits for the tier about a new
// group: two workers of two members taking over from each other at once
// wait for each other until it passes, and both groups are marked.
const takeOverTimeout = time.Second

// The directions of a hand-over, and the reason of its mark.
const (
	directionIn  = "in"
	directionOut = "out"
	markRescale  = "rescale"
)

// ErrOtherConfiguration is HandOver's error when the group was saved under
// another configuration than the one asking: its state would not fit.
var ErrOtherConfiguration = errors.New("the group's state is of another configuration")

// UseTier makes the stage take over, from tier, the groups of an attribute
// it has never seen. It must be called before Start. A stage whose
// evaluator cannot save its groups cannot take them over, nor give them up.
func (s *Stage[G]) UseTier(tier Tier) {
	if _, ok := s.eval.(Checkpointer[G]); ok {
		s.tier = tier
		for _, w := range s.workers {
			w.held = &heldKeys{keys: map[string]struct{}{}}
		}
	}
}

// heldKeys are the keys of the groups a worker holds, open or kept,
// readable from other goroutines. A member's worker waits on its peers for
// each new conversation; if a peer's answer that it does not hold one
// waited on the peer's worker in turn, two members would wait on each
// other. Kept only in a tier; nil outside one.
type heldKeys struct {
	mu   sync.Mutex
	keys map[string]struct{}
}

func (h *heldKeys) add(key string) {
	if h != nil {
		h.mu.Lock()
		h.keys[key] = struct{}{}
		h.mu.Unlock()
	}
}

func (h *heldKeys) remove(key string) {
	if h != nil {
		h.mu.Lock()
		delete(h.keys, key)
		h.mu.Unlock()
	}
}

// mayHold is false when the worker surely does not hold key; outside a
// tier it cannot tell.
func (h *heldKeys) mayHold(key string) bool {
	if h == nil {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.keys[key]
	return ok
}

// HandOver gives up group key, open or kept, to another collector of the
// tier: it returns the group's saved form and forgets it here, without
// ending it (its end is the new holder's to report). found is false when
// the group is not held here.
func (s *Stage[G]) HandOver(ctx context.Context, key, fingerprint string) (saved []byte, found bool, err error) {
	cp, ok := s.eval.(Checkpointer[G])
	if !ok {
		return nil, false, nil
	}
	if fingerprint != cp.Fingerprint() {
		return nil, false, fmt.Errorf("%w (asked under %.12s, held under %.12s): give both collectors the same processor configuration", ErrOtherConfiguration, fingerprint, cp.Fingerprint())
	}
	w := s.workers[s.workerOf(key)]
	if !w.held.mayHold(key) {
		return nil, false, nil
	}
	out := make(chan []byte, 1)
	s.ensureWorkers()
	s.releaseGroup(key)
	w.in.put(work[G]{query: func(w *worker[G]) { out <- w.giveUp(ctx, cp, key) }})
	select {
	case saved = <-out:
		return saved, saved != nil, nil
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

// releaseGroup hands the traces of group key still held to its worker now,
// so that the group is handed over with every turn that came here: the
// router sends the next ones to the new holder.
func (s *Stage[G]) releaseGroup(key string) {
	var rs []released
	for _, sh := range s.shards {
		sh.mu.Lock()
		var taken []*tracebuffer.Trace
		sh.buf.Each(func(t *tracebuffer.Trace) {
			if k, found := sequence.GroupOf(t.Spans, s.cfg.GroupBy); found && k == key {
				taken = append(taken, t)
			}
		})
		for _, t := range taken {
			sh.buf.Take(t)
		}
		rs = append(rs, s.route(sh, taken)...)
		s.recordHeld(context.Background(), sh)
		sh.mu.Unlock()
	}
	slices.SortFunc(rs, func(a, b released) int { return tracebuffer.CompareStart(a.trace, b.trace) })
	s.dispatch(rs, nil, work[G]{now: s.now()})
}

// giveUp removes group key, open or kept, and returns its saved form; nil
// when the worker does not hold it.
func (w *worker[G]) giveUp(ctx context.Context, cp Checkpointer[G], key string) []byte {
	var saved []byte
	if seen, ok := w.groups.Seen(key); ok {
		g, _ := w.groups.Remove(key)
		w.s.opened(-1)
		saved = w.saveGroup(cp, key, seen, g)
	} else if data, ok := w.dormant.Remove(key); ok {
		w.s.opened(-1)
		w.s.slept(-1)
		saved = data
	} else if seen, ok := w.retained.Seen(key); ok {
		data, _ := w.retained.Remove(key)
		saved = w.takeBackEnd(cp, key, seen, data)
	} else {
		return nil
	}
	w.held.remove(key)
	w.forget(key)
	// A turn of it that still comes here (sent before the router switched)
	// starts a group marked partial.
	w.forgotten.add(key, markRescale, time.Now())
	// Written at once, with what the outbox holds (its groups' state must
	// not be written before their spans are passed on): restored here after
	// a crash, it would have two holders.
	w.change(key)
	w.flush(ctx)
	w.s.tel.GroupsHandedOver.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrDirection, directionOut)))
	return saved
}

// takeBackEnd tells a Resumer that the kept group key, in its saved form
// data, goes on elsewhere after its end, and returns the form to hand over:
// the group as Resumed left it (temporalcheck: with where its end was, so
// that the peer does not report that end again), or data when there is no
// Resumer or the group cannot be rebuilt.
func (w *worker[G]) takeBackEnd(cp Checkpointer[G], key string, seen int64, data []byte) []byte {
	r, ok := w.s.eval.(Resumer[G])
	if !ok {
		return data
	}
	g, err := w.rebuild(data, "kept group")
	if err != nil {
		w.s.Warnings.Once("hand-over-resume", "a kept group handed over could not be rebuilt to take its end back; the tier may count its end twice", zap.String("group", key), zap.Error(err))
		return data
	}
	r.Resumed(key, g.state)
	return w.saveGroup(cp, key, seen, g)
}

// takeOver is group key taken over from the tier, or nil: none holds it,
// or the stage is in no tier. A member that did not answer marks the new
// group partial.
func (w *worker[G]) takeOver(ctx context.Context, key string) (g *group[G], mark bool) {
	if w.s.tier == nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, takeOverTimeout)
	defer cancel()
	saved, found, err := w.s.tier.TakeOver(ctx, key, w.s.eval.(Checkpointer[G]).Fingerprint())
	if !found {
		if err != nil {
			w.s.Warnings.Once("take-over", "a member of the tier did not say whether it held a conversation new here (a rescale may have moved it); it starts afresh here, marked partial", zap.String("group", key), zap.Error(err))
		}
		return nil, err != nil
	}
	r := checkpoint.NewReader(saved)
	sg := decodeSaved(r, func(name string) string { return "group handed over: " + name }, checkpointVersion)
	if err = r.End("group handed over"); err == nil && sg.key != key {
		err = fmt.Errorf("asked for %q, given %q", key, sg.key)
	}
	if err == nil {
		g, err = w.restored(sg)
	}
	if err != nil {
		w.s.Warnings.Once("take-over-decode", "a conversation handed over by another member could not be restored; it starts afresh here, marked partial", zap.String("group", key), zap.Error(err))
		return nil, true
	}
	w.s.tel.GroupsHandedOver.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrDirection, directionIn)))
	w.s.Warnings.Once("taken-over", "a conversation another member of the tier held was handed over (a rescale moved it): it goes on here where it was", zap.String("group", key))
	return g, false
}
