// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/stage/tracebuffer"
)

// journal keeps, in the storage extension, the spans the stage has
// acknowledged and not yet passed on, so that a crash loses none of them.
// ConsumeTraces writes a batch's spans before it returns, one entry per
// trace (a refused write refuses the batch: the sender retries); a worker
// deletes a trace's entries once the next consumer has taken its spans, in
// the batch that writes the state of the groups they changed (statelog.go),
// and before it snapshots its groups for a checkpoint; a start replays what
// is left. So an entry is never both in the restored groups' state and
// replayed: what a worker judged before its snapshot had been passed on and
// deleted, and what it judged and passed on after it is in the state log.
// What it had not passed on is judged again from the entry.
//
// Storage clients cannot list their keys: entries are numbered, the number
// to come is written with each batch, and a checkpoint records the lowest
// number still held, so that a start reads the range between.
type journal struct {
	store storage.Client

	writeMu sync.Mutex // one batch written at a time: next is written in order
	next    uint64     // the number of the next entry

	liveMu sync.Mutex
	live   map[uint64]struct{} // entries written or replayed and not yet deleted
}

// The journal's keys.
const (
	journalEntryPrefix = "held/"
	journalNextKey     = "held-next"
	journalLowKey      = "held-low"
)

// replayChunk is how many entries a start reads in one storage batch.
const replayChunk = 1024

// journalEntry is a trace's spans of one batch, as the journal numbered them.
type journalEntry struct {
	trace pcommon.TraceID
	seq   uint64
}

func newJournal(store storage.Client) *journal {
	return &journal{store: store, live: map[uint64]struct{}{}}
}

func journalKey(seq uint64) string {
	return string(binary.BigEndian.AppendUint64([]byte(journalEntryPrefix), seq))
}

func encodeSeq(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

func decodeSeq(what string, b []byte) (uint64, error) {
	if b == nil {
		return 0, nil
	}
	if len(b) != 8 {
		return 0, fmt.Errorf("%s: %d bytes, want 8", what, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// write splits td by trace and writes each trace's spans as an entry. td
// keeps its spans, regrouped so that each scope holds one trace. On error
// nothing was written: the batch must be refused.
func (j *journal) write(ctx context.Context, td ptrace.Traces) ([]journalEntry, error) {
	pieces := map[pcommon.TraceID]ptrace.Traces{}
	var order []pcommon.TraceID
	moveSpans(td, ptrace.Span.TraceID, func(id pcommon.TraceID) ptrace.Traces {
		p, ok := pieces[id]
		if !ok {
			p = ptrace.NewTraces()
			pieces[id] = p
			order = append(order, id)
		}
		return p
	})
	values := make([][]byte, len(order))
	var m ptrace.ProtoMarshaler
	for i, id := range order {
		var err error
		if values[i], err = m.MarshalTraces(pieces[id]); err != nil {
			return nil, err
		}
		pieces[id].ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	j.writeMu.Lock()
	defer j.writeMu.Unlock()
	ops := make([]*storage.Operation, 0, len(order)+1)
	entries := make([]journalEntry, len(order))
	for i, id := range order {
		entries[i] = journalEntry{trace: id, seq: j.next + uint64(i)}
		ops = append(ops, storage.SetOperation(journalKey(entries[i].seq), values[i]))
	}
	next := j.next + uint64(len(order))
	ops = append(ops, storage.SetOperation(journalNextKey, encodeSeq(next)))
	if err := j.store.Batch(ctx, ops...); err != nil {
		return nil, err
	}
	j.next = next
	j.liveMu.Lock()
	for _, e := range entries {
		j.live[e.seq] = struct{}{}
	}
	j.liveMu.Unlock()
	return entries, nil
}

// forgetOps appends to ops the operations deleting entries whose spans the
// next consumer has taken; forgotten drops them once the batch succeeded.
func (j *journal) forgetOps(ops []*storage.Operation, seqs []uint64) []*storage.Operation {
	for _, seq := range seqs {
		ops = append(ops, storage.DeleteOperation(journalKey(seq)))
	}
	return ops
}

func (j *journal) forgotten(seqs []uint64) {
	j.liveMu.Lock()
	for _, seq := range seqs {
		delete(j.live, seq)
	}
	j.liveMu.Unlock()
}

// low is the lowest entry still held (the next one when none is): every
// entry a crash would leave is at or above it.
func (j *journal) low() uint64 {
	j.writeMu.Lock()
	low := j.next
	j.writeMu.Unlock()
	j.liveMu.Lock()
	defer j.liveMu.Unlock()
	return lowestLive(j.live, low, nil)
}

// lowestLive is the lowest of the entries in live but not in gone, next
// when there is none.
func lowestLive(live map[uint64]struct{}, next uint64, gone []uint64) uint64 {
	skip := make(map[uint64]bool, len(gone))
	for _, seq := range gone {
		skip[seq] = true
	}
	low := next
	for seq := range live {
		if seq < low && !skip[seq] {
			low = seq
		}
	}
	return low
}

// replay reads the entries a previous run left, in order, and hands each
// to take; an entry that cannot be decoded is reported to damaged and
// deleted. It runs at start, before any span comes in.
func (j *journal) replay(ctx context.Context, take func(seq uint64, td ptrace.Traces), damaged func(seq uint64, err error)) error {
	var u ptrace.ProtoUnmarshaler
	log := numberedLog{name: "the journal", lowKey: journalLowKey, nextKey: journalNextKey, key: journalKey}
	_, next, err := log.read(ctx, j.store, func(seq uint64, value []byte) error {
		td, err := u.UnmarshalTraces(value)
		if err != nil {
			damaged(seq, err)
			return j.store.Delete(ctx, journalKey(seq))
		}
		j.live[seq] = struct{}{}
		take(seq, td)
		return nil
	})
	j.next = next
	return err
}

// numberedLog is a log of numbered entries in a storage client, which
// cannot list its keys: each entry's key, and the keys holding the lowest
// number still held and the number to come.
type numberedLog struct {
	name            string // for errors
	lowKey, nextKey string
	key             func(seq uint64) string
}

// read reads the log's bounds, then the entries between them in order,
// handing each present to each; it returns the bounds as far as they were
// read.
func (n numberedLog) read(ctx context.Context, store storage.Client, each func(seq uint64, value []byte) error) (low, next uint64, err error) {
	bounds := []*storage.Operation{storage.GetOperation(n.lowKey), storage.GetOperation(n.nextKey)}
	if err := store.Batch(ctx, bounds...); err != nil {
		return 0, 0, err
	}
	if low, err = decodeSeq(n.name+"'s low mark", bounds[0].Value); err != nil {
		return low, 0, err
	}
	if next, err = decodeSeq(n.name+"'s next number", bounds[1].Value); err != nil {
		return low, 0, err
	}
	for from := low; from < next; from += replayChunk {
		ops := make([]*storage.Operation, 0, replayChunk)
		for seq := from; seq < min(from+replayChunk, next); seq++ {
			ops = append(ops, storage.GetOperation(n.key(seq)))
		}
		if err := store.Batch(ctx, ops...); err != nil {
			return low, next, err
		}
		for i, op := range ops {
			if op.Value == nil {
				continue
			}
			if err := each(from+uint64(i), op.Value); err != nil {
				return low, next, err
			}
		}
	}
	return low, next, nil
}

// entriesByShard files a batch's journal entries by the shard of their
// trace; nil without a journal.
func (s *Stage[G]) entriesByShard(entries []journalEntry) []map[pcommon.TraceID]uint64 {
	if entries == nil {
		return nil
	}
	out := make([]map[pcommon.TraceID]uint64, len(s.shards))
	for _, e := range entries {
		i := s.shardOf(e.trace)
		if out[i] == nil {
			out[i] = map[pcommon.TraceID]uint64{}
		}
		out[i][e.trace] = e.seq
	}
	return out
}

// fileEntries gives each of a batch's entries to its trace, held or just
// forced out; what is left is the entries of late traces. It runs under the
// shard's lock, after the batch was added.
func fileEntries(buf *tracebuffer.Buffer, out []*tracebuffer.Trace, entries map[pcommon.TraceID]uint64) map[pcommon.TraceID]uint64 {
	for _, t := range out {
		if seq, ok := entries[t.ID]; ok {
			t.Journal = append(t.Journal, seq)
			delete(entries, t.ID)
		}
	}
	for id, seq := range entries {
		if t := buf.Held(id); t != nil {
			t.Journal = append(t.Journal, seq)
			delete(entries, id)
		}
	}
	return entries
}

// refuse answers a batch the journal could not keep: nothing was taken, and
// the error is not permanent, so the receiver tells the sender to retry.
func (s *Stage[G]) refuse(ctx context.Context, spans int, err error) error {
	s.tel.SpansRefused.Add(ctx, int64(spans))
	s.Warnings.Once("journal-write", "the storage cannot keep incoming spans (a full disk?): they are refused, and their senders retry; nothing is taken until it can", zap.Error(err))
	return fmt.Errorf("agentguard could not journal the spans before acknowledging them: %w", err)
}

// forget deletes the journal entries of spans passed on and, in the same
// batch, writes the state of the groups they changed (nil: none), so that
// after a crash each span is either replayed or its effect restored. It
// returns the state entry's number, and false if the storage refused: then
// both are tried again with the next spans passed on, and no checkpoint is
// written meanwhile (its groups would count their spans twice at a start).
func (s *Stage[G]) forget(ctx context.Context, seqs []uint64, states []byte) (uint64, bool) {
	ops := s.journal.forgetOps(nil, seqs)
	s.states.mu.Lock()
	var seq uint64
	if states != nil {
		ops, seq = s.states.writeOps(ops, states)
	}
	err := s.store.Batch(ctx, ops...)
	if err == nil && states != nil {
		s.states.written(seq)
	}
	s.states.mu.Unlock()
	if err != nil {
		s.Warnings.Once("journal-delete", "the storage refused to delete journal entries of spans passed on; checkpoints wait until it can", zap.Error(err))
		return 0, false
	}
	s.journal.forgotten(seqs)
	return seq, true
}

// replayJournal holds again, as if they had just come in, the spans a crash
// left in the journal: acknowledged, and not passed on.
func (s *Stage[G]) replayJournal(ctx context.Context) error {
	s.journal = newJournal(s.store)
	spans := 0
	err := s.journal.replay(ctx, func(seq uint64, td ptrace.Traces) {
		spans += td.SpanCount()
		forced, late := s.hold(ctx, td, []journalEntry{{trace: firstTraceID(td), seq: seq}}, s.now())
		s.dispatch(forced, late, work[G]{now: s.now()})
	}, func(seq uint64, err error) {
		s.tel.ForwardFailures.Add(ctx, 1)
		s.logger.Error("a journal entry of held spans cannot be decoded: its spans are lost", zap.Uint64("entry", seq), zap.Error(err))
	})
	if spans > 0 {
		s.tel.SpansReplayed.Add(ctx, int64(spans))
		s.logger.Info("replayed the spans held when the collector stopped, from the journal", zap.Int("spans", spans))
	}
	return err
}
