// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// A conversation whose user pauses longer than group_timeout is not over:
// its group ends (its end-of-sequence verdicts are reported), but the
// worker keeps it, as a checkpoint would hold it, for Config.Retention, so
// that a later turn continues it where it was instead of starting afresh
// (an assertion that needs an earlier event would fire on every correct
// conversation with a long pause). Past the retention, or beyond
// max_traces kept, its key is remembered among the forgotten groups: one
// that comes back then starts afresh, marked partial.

// retain keeps a group that ended idle, in its saved form, or forgets it
// when it cannot be kept.
func (w *worker[G]) retain(key string, g *group[G], now time.Time) {
	cp, ok := w.s.eval.(Checkpointer[G])
	if !ok || w.s.cfg.Retention <= 0 {
		w.forgotten.add(key, markRetention, now)
		return
	}
	saved := w.saveGroup(cp, key, now.UnixNano(), g)
	w.retained.Touch(key, now, func() []byte { return saved })
	for w.retained.Len() > w.maxGroups {
		oldest := w.retained.Oldest()
		w.retained.Remove(oldest)
		w.held.remove(oldest)
		w.forgotten.add(oldest, markRetention, now)
		w.change(oldest)
	}
}

// keepReleased keeps a trace that was a group of its own, ended at its
// release (or, judged on arrival, idle past group_timeout), for
// group_timeout (at most max_traces): later spans of it take it up again.
// Past that they start a group marked partial (judge knows late spans from
// their chunk: nothing is remembered of a trace let go).
func (w *worker[G]) keepReleased(key string, g *group[G], now time.Time) {
	cp, ok := w.s.eval.(Checkpointer[G])
	if !ok {
		return
	}
	saved := w.saveGroup(cp, key, now.UnixNano(), g)
	w.released.Touch(key, now, func() []byte { return saved })
	for w.released.Len() > w.maxGroups {
		w.released.Remove(w.released.Oldest())
	}
}

// expireRetained forgets the groups kept longer than the retention, and
// the traces ended at their release longer ago than group_timeout.
func (w *worker[G]) expireRetained(now time.Time) {
	for _, key := range w.retained.Idle(now, w.s.cfg.Retention) {
		w.retained.Remove(key)
		w.held.remove(key)
		w.forgotten.add(key, markRetention, now)
		w.change(key)
	}
	for _, key := range w.released.Idle(now, w.s.cfg.GroupTimeout) {
		w.released.Remove(key)
	}
}

// resume is the kept group of key, taken back, or nil.
func (w *worker[G]) resume(ctx context.Context, key string) *group[G] {
	data, ok := w.retained.Remove(key)
	if !ok {
		if data, ok = w.released.Remove(key); !ok {
			return nil
		}
	}
	g, err := w.rebuild(data, "kept group")
	if err != nil {
		// It was written by this process from a state it held: an error is a bug.
		w.s.Warnings.Once("resume", "a kept group could not be taken back; it starts afresh, marked partial", zap.String("group", key), zap.Error(err))
		w.forgotten.add(key, markRetention, time.Now())
		return nil
	}
	if r, ok := w.s.eval.(Resumer[G]); ok {
		r.Resumed(key, g.state)
	}
	w.s.tel.GroupsResumed.Add(ctx, 1)
	return g
}

// restored rebuilds a group from its saved form.
func (w *worker[G]) restored(sg savedGroup) (*group[G], error) {
	g := &group[G]{latch: w.src.NewLatch(), trace: sg.trace, lastSpan: sg.span, history: sg.history, latest: sg.latest,
		latestEvent: sg.latestE, service: w.intern(sg.service), own: sg.own, ended: sg.ended}
	if err := g.latch.Restore(sg.latch); err != nil {
		return nil, err
	}
	if err := g.latch.RestoreMeters(sg.meters); err != nil {
		return nil, err
	}
	var err error
	if g.state, err = w.s.eval.(Checkpointer[G]).RestoreState(sg.key, sg.state); err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	return g, nil
}

// saved is a group's saved form, last active at seen. Its state is in the
// worker's scratch buffer, valid until the next call: the callers copy it
// at once (appendSaved).
func (w *worker[G]) saved(cp Checkpointer[G], key string, seen int64, g *group[G]) savedGroup {
	service := ""
	if g.service != nil {
		service = *g.service
	}
	w.stateBuf = cp.AppendState(w.stateBuf[:0], g.state)
	n := len(w.stateBuf)
	w.stateBuf = g.latch.AppendMeters(w.stateBuf)
	return savedGroup{key: key, seen: seen, history: g.history, latest: g.latest, latestE: g.latestEvent, latch: g.latch.State(),
		trace: g.trace, span: g.lastSpan, service: service, state: w.stateBuf[:n], meters: w.stateBuf[n:], own: g.own, ended: g.ended}
}

// saveGroup is a group's saved form in a buffer of its own, of its exact
// size: kept and dormant groups are many.
func (w *worker[G]) saveGroup(cp Checkpointer[G], key string, seen int64, g *group[G]) []byte {
	w.savedBuf = appendSaved(w.savedBuf[:0], w.saved(cp, key, seen, g))
	return bytes.Clone(w.savedBuf)
}
