// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"time"

	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/checkpoint"
)

// Most open conversations are idle: between two turns, a user reads and
// types for seconds or minutes, and the group's monitors, events and
// bookkeeping wait in memory. A group idle for compact_after is kept
// instead in its saved form (a checkpoint's: a few bytes an event) among
// the dormant groups, still open, and rebuilt by replaying its events
// through the evaluator when a trace of it comes, a question is asked
// about it, or it ends. The evaluator is deterministic, so the rebuilt
// group is the group that was saved (what a checkpoint restore relies on).

// compact saves the groups idle for compact_after and lets their state go.
// A trace that is a group of its own stays as it is: it ends soon, at its
// release or idle past group_timeout.
func (w *worker[G]) compact(now time.Time) {
	cp, ok := w.s.eval.(Checkpointer[G])
	if !ok || w.s.cfg.CompactAfter <= 0 {
		return
	}
	for _, key := range w.groups.Idle(now, w.s.cfg.CompactAfter) {
		seen, _ := w.groups.Seen(key)
		if g, _ := w.groups.Get(key); g.own {
			continue
		}
		g, _ := w.groups.Remove(key)
		saved := w.saveGroup(cp, key, seen, g)
		w.dormant.Touch(key, time.Unix(0, seen), func() []byte { return saved })
		w.s.slept(1)
	}
}

// wake takes a dormant group back as an open one; false when key is not
// dormant. A saved form that does not decode (written by this process
// from a state it held: a bug) is logged, and the group is forgotten:
// one that comes back starts afresh, marked partial.
func (w *worker[G]) wake(key string, now time.Time) (*group[G], bool) {
	data, ok := w.dormant.Remove(key)
	if !ok {
		return nil, false
	}
	w.s.slept(-1)
	g, err := w.rebuild(data, "dormant group")
	if err != nil {
		w.s.Warnings.Once("wake", "a dormant group could not be rebuilt; it is forgotten, and a later trace of it starts afresh, marked partial", zap.String("group", key), zap.Error(err))
		w.s.opened(-1)
		w.held.remove(key)
		w.forget(key)
		w.forgotten.add(key, markRetention, now)
		return nil, false
	}
	return g, true
}

// rebuild is a group from its saved form.
func (w *worker[G]) rebuild(data []byte, what string) (*group[G], error) {
	r := checkpoint.NewReader(data)
	sg := decodeSaved(r, func(name string) string { return what + ": " + name }, checkpointVersion)
	g, err := w.restored(sg)
	if err == nil {
		err = r.End(what)
	}
	return g, err
}

// rebuildForQuestion is a group in its saved form (dormant or kept)
// rebuilt for a question about it; false, logged once, when its saved form
// does not decode.
func (w *worker[G]) rebuildForQuestion(key string, data []byte) (*group[G], bool) {
	g, err := w.rebuild(data, "saved group")
	if err != nil {
		w.s.Warnings.Once("wake-question", "a group in its saved form (dormant or kept) could not be rebuilt for a question; it is answered as a new conversation", zap.String("group", key), zap.Error(err))
		return nil, false
	}
	return g, true
}

// oldestOpen is the least recently active open group, dormant or not.
func (w *worker[G]) oldestOpen() string {
	d, g := w.dormant.Oldest(), w.groups.Oldest()
	if d == "" {
		return g
	}
	if g == "" {
		return d
	}
	ds, _ := w.dormant.Seen(d)
	gs, _ := w.groups.Seen(g)
	if gs < ds {
		return g
	}
	return d
}

// openCount is the open groups, dormant or not.
func (w *worker[G]) openCount() int { return w.groups.Len() + w.dormant.Len() }
