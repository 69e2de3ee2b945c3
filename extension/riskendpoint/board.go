// SPDX-License-Identifier: Apache-2.0

package riskendpoint

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentguard/agentguard/internal/core/guard"
)

// Board is what the extension offers a probguard processor: a slot per open
// group, into which the processor publishes each decision. A processor
// finds it among host.GetExtensions() by the component ID of its
// risk_endpoint setting.
type Board interface {
	// Open is a new slot for group, replacing any slot of that key. It is
	// called once per group, when the group opens.
	Open(group string) *Slot
	// Resume is the slot open under group, or, when there is none, a new
	// one as Open makes: a group rebuilt from its saved form while it is
	// still open (a dormant group, woken or asked about) keeps its latest
	// decision.
	Resume(group string) *Slot
	// Close drops group's slot, if it is still s: the group has ended.
	Close(group string, s *Slot)
}

// Slot holds one group's latest decision. Publish is one atomic store: the
// scoring path takes no lock and never waits for a reader.
type Slot struct {
	latest atomic.Pointer[Decision]
}

// Publish makes d the group's latest decision. d must not change after.
func (s *Slot) Publish(d *Decision) { s.latest.Store(d) }

// Latest is the group's latest decision; nil before the first.
func (s *Slot) Latest() *Decision { return s.latest.Load() }

// Decision is one decision as published: rendered into an alert only when
// asked for, so that scoring pays for no explanation nobody reads.
type Decision struct {
	Guard    *guard.Guard // immutable: it may render on a reader's goroutine
	Decision guard.Decision
	Group    string
	Event    int
	TraceID  pcommon.TraceID
	SpanID   pcommon.SpanID // the event's span
	At       time.Time      // when it was decided
	// History is "" for a complete history, else the agentguard.history
	// mark of the group (partial, out_of_order).
	History string
}

// boardShards spreads the groups over independently locked maps, so that
// groups opening and ending on several workers, and readers, rarely meet.
const boardShards = 64

// board is the extension's Board: a sharded map of slots. Its size is the
// groups the processors publishing to it hold open (bounded by their
// max_traces); a slot is dropped when its group ends.
type board struct {
	seed   maphash.Seed
	shards [boardShards]boardShard
}

type boardShard struct {
	mu    sync.RWMutex
	slots map[string]*Slot
}

func newBoard() *board {
	b := &board{seed: maphash.MakeSeed()}
	for i := range b.shards {
		b.shards[i].slots = map[string]*Slot{}
	}
	return b
}

func (b *board) shard(group string) *boardShard {
	return &b.shards[maphash.String(b.seed, group)%boardShards]
}

func (b *board) Open(group string) *Slot {
	s := &Slot{}
	sh := b.shard(group)
	sh.mu.Lock()
	sh.slots[group] = s
	sh.mu.Unlock()
	return s
}

func (b *board) Resume(group string) *Slot {
	sh := b.shard(group)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.slots[group]
	if !ok {
		s = &Slot{}
		sh.slots[group] = s
	}
	return s
}

func (b *board) Close(group string, s *Slot) {
	sh := b.shard(group)
	sh.mu.Lock()
	if sh.slots[group] == s {
		delete(sh.slots, group)
	}
	sh.mu.Unlock()
}

// latest is group's latest decision: open is false for a group not open,
// and d is nil for an open group that has no scored event yet.
func (b *board) latest(group string) (d *Decision, open bool) {
	sh := b.shard(group)
	sh.mu.RLock()
	s, open := sh.slots[group]
	sh.mu.RUnlock()
	if !open {
		return nil, false
	}
	return s.Latest(), true
}

// len is the number of open groups.
func (b *board) len() int {
	n := 0
	for i := range b.shards {
		sh := &b.shards[i]
		sh.mu.RLock()
		n += len(sh.slots)
		sh.mu.RUnlock()
	}
	return n
}
