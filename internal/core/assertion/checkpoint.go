// SPDX-License-Identifier: Apache-2.0

package assertion

import (
	"fmt"

	"github.com/agentguard/agentguard/internal/checkpoint"
	"github.com/agentguard/agentguard/internal/core/texpr"
)

// A group's state is saved as its events since its sequence began (what an
// explanation lists anyway), not as the monitors' live evaluations: the
// monitors are deterministic, so replaying the events through new ones
// rebuilds them exactly, and the saved form does not change when the
// engine's internals do. Each event costs its name, a time delta and its
// bits.

// Checkpointable reports why the groups cannot be saved: an assertion over
// capture predicates binds values read from the spans, which a replay of
// the saved bits cannot bind again.
func (r *Runner) Checkpointable() error {
	if len(r.unreplayable) > 0 {
		return fmt.Errorf("assertion %q uses capture predicates, whose bindings a checkpoint does not keep", r.unreplayable[0].Name)
	}
	return nil
}

// AppendGroup appends a group's state to b.
func (r *Runner) AppendGroup(b []byte, g *Group) []byte {
	b = checkpoint.AppendUvarint(b, uint64(len(g.events)))
	prev := int64(0)
	for _, ev := range g.events {
		b = checkpoint.AppendString(b, ev.name)
		b = checkpoint.AppendVarint(b, ev.time-prev)
		b = checkpoint.AppendUvarint(b, ev.bits)
		prev = ev.time
	}
	if g.endedAt > 0 {
		// Only a group taken up after its end has it: every other saved
		// form is as an older build wrote it.
		b = checkpoint.AppendUvarint(b, uint64(g.endedAt))
	}
	return b
}

// replay appends ev to g's events and replays it through g's monitors:
// what a saved group's events rebuild.
func (g *Group) replay(ev eventInfo) {
	g.events = append(g.events, ev)
	for m := range g.monitors {
		g.monitors[m].Replay(texpr.Event{Bits: ev.bits, Time: ev.time, Ref: len(g.events) - 1})
	}
}

// RestoreGroup rebuilds a group from what AppendGroup wrote, replaying its
// events through new monitors; the verdicts the replay decides were
// reported before the checkpoint and are dropped.
func (r *Runner) RestoreGroup(data []byte) (*Group, error) {
	rd := checkpoint.NewReader(data)
	n := rd.Count("events", 3) // a name's length, a delta and bits: a byte each at least
	if r.opts.MaxEventsPerGroup > 0 && n >= r.opts.MaxEventsPerGroup {
		return nil, fmt.Errorf("events: %d, but max_events_per_group is %d", n, r.opts.MaxEventsPerGroup)
	}
	g := r.NewGroup()
	prev := int64(0)
	for i := range n {
		name := rd.String(fmt.Sprintf("event %d: name", i+1))
		t := prev + rd.Varint(fmt.Sprintf("event %d: time", i+1))
		bits := rd.Uvarint(fmt.Sprintf("event %d: bits", i+1))
		if rd.Err() != nil {
			break
		}
		prev = t
		g.replay(eventInfo{name, t, bits})
	}
	if rd.Len() > 0 && rd.Err() == nil {
		ended := rd.Uvarint("ended at")
		if ended == 0 || ended > uint64(len(g.events)) {
			rd.Fail("ended at", fmt.Errorf("%d, of %d events", ended, len(g.events)))
		} else {
			g.endedAt = int(ended)
			g.decidedAtEnd = r.decidedAtEnd(g)
		}
	}
	if err := rd.End("events"); err != nil {
		return nil, err
	}
	g.rest()
	return g, nil
}
