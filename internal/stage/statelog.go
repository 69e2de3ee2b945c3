// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentguard/agentguard/internal/checkpoint"
)

// stateLog keeps, in the storage extension, the state of each group a
// worker judged since the last checkpoint. A worker writes it in the storage
// batch that deletes the journal entries of the spans it passed on, so that
// after a crash every span is either still in the journal (judged again) or
// its effect is here: a group is restored from the checkpoint, then from
// its latest entry in the log. A checkpoint deletes, in the batch that
// writes it, the entries whose effect it holds.
//
// Entries are numbered as the journal's are (storage clients cannot list
// their keys): the number to come is written with each entry, and a
// checkpoint records the lowest number still held.
type stateLog struct {
	mu   sync.Mutex // one entry written at a time: next is written in order
	low  uint64     // as read at start
	next uint64
	live map[uint64]struct{} // written or read at start, not yet deleted
}

// The state log's keys.
const (
	stateEntryPrefix = "state/"
	stateNextKey     = "state-next"
	stateLowKey      = "state-low"
)

// What a state entry says of a group: where it is now.
const (
	stateOpen      byte = iota + 1 // open: its saved form
	stateKept                      // ended idle, kept for retention: its saved form
	stateForgotten                 // ended early, or let go: a return is marked
	stateGone                      // ended, nothing kept
)

// groupState is one group's record in a state entry.
type groupState struct {
	key       string
	where     byte
	saved     []byte // stateOpen, stateKept: the saved form (appendSaved)
	forgotten forgottenKey
}

func newStateLog() *stateLog { return &stateLog{live: map[uint64]struct{}{}} }

func stateKey(seq uint64) string {
	return string(binary.BigEndian.AppendUint64([]byte(stateEntryPrefix), seq))
}

// encodeStates is an entry's value: the evaluator's fingerprint (an entry
// written under another configuration is not applied), then the groups.
func encodeStates(fingerprint string, states []groupState) []byte {
	b := checkpoint.AppendString(nil, fingerprint)
	b = checkpoint.AppendUvarint(b, uint64(len(states)))
	for _, st := range states {
		b = append(b, st.where)
		switch st.where {
		case stateOpen, stateKept:
			b = checkpoint.AppendBytes(b, st.saved)
		case stateForgotten:
			b = appendForgotten(b, st.forgotten)
		default:
			b = checkpoint.AppendString(b, st.key)
		}
	}
	return b
}

// decodeStates reads an entry; every error names the field.
func decodeStates(data []byte) (fingerprint string, states []groupState, err error) {
	r := checkpoint.NewReader(data)
	fingerprint = r.String("fingerprint")
	n := r.Count("groups", 2)
	for i := 0; i < n && r.Err() == nil; i++ {
		field := func(name string) string { return fmt.Sprintf("group %d: %s", i+1, name) }
		st := groupState{}
		if wb := r.Fixed(field("where"), 1); wb != nil {
			st.where = wb[0]
		}
		switch st.where {
		case stateOpen, stateKept:
			st.saved = r.Bytes(field("saved form"))
			sr := checkpoint.NewReader(st.saved)
			st.key = decodeSaved(sr, field, checkpointVersion).key
			if err := sr.End(field("saved form")); err != nil {
				return "", nil, err
			}
		case stateForgotten:
			st.forgotten = forgottenKey{key: r.String(field("key")), when: r.Varint(field("when"))}
			st.forgotten.reason = r.String(field("reason"))
			st.key = st.forgotten.key
		case stateGone:
			st.key = r.String(field("key"))
		default:
			if r.Err() == nil {
				r.Fail(field("where"), fmt.Errorf("unknown %d", st.where))
			}
		}
		states = append(states, st)
	}
	if err := r.End("state entry"); err != nil {
		return "", nil, err
	}
	return fingerprint, states, nil
}

// writeOps appends to ops the operations writing value as the next entry,
// and returns its number; the caller runs them in one batch while holding
// l.mu, and calls written on success.
func (l *stateLog) writeOps(ops []*storage.Operation, value []byte) ([]*storage.Operation, uint64) {
	seq := l.next
	return append(ops, storage.SetOperation(stateKey(seq), value), storage.SetOperation(stateNextKey, encodeSeq(seq+1))), seq
}

func (l *stateLog) written(seq uint64) {
	l.next = seq + 1
	l.live[seq] = struct{}{}
}

// lowAfter is the lowest entry left once seqs are deleted (the next one
// when none is): what a checkpoint deleting seqs records.
func (l *stateLog) lowAfter(seqs []uint64) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return lowestLive(l.live, l.next, seqs)
}

// deleteOps appends to ops the operations deleting seqs and recording low
// (lowAfter) as the lowest entry left; dropped forgets them once the batch
// succeeded. An entry written since lowAfter is numbered at or above it.
func (l *stateLog) deleteOps(ops []*storage.Operation, seqs []uint64, low uint64) []*storage.Operation {
	for _, seq := range seqs {
		ops = append(ops, storage.DeleteOperation(stateKey(seq)))
	}
	return append(ops, storage.SetOperation(stateLowKey, encodeSeq(low)))
}

func (l *stateLog) dropped(seqs []uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, seq := range seqs {
		delete(l.live, seq)
	}
}

// read reads the entries a previous run left, in order. On error, unread
// is what to do instead.
func (l *stateLog) read(ctx context.Context, store storage.Client) (seqs []uint64, entries [][]byte, err error) {
	log := numberedLog{name: "the state log", lowKey: stateLowKey, nextKey: stateNextKey, key: stateKey}
	l.low, l.next, err = log.read(ctx, store, func(seq uint64, value []byte) error {
		seqs, entries = append(seqs, seq), append(entries, value)
		l.live[seq] = struct{}{}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return seqs, entries, nil
}

// unread gives up a log that could not be read: every number it may hold,
// for the next checkpoint to delete. Numbers unknown (its bounds unread),
// it starts again from 0: an entry written then replaces an old one of its
// number, and one above the next number written is never read.
func (l *stateLog) unread() []uint64 {
	clear(l.live)
	if l.next < l.low || l.next-l.low > 1<<24 {
		l.low, l.next = 0, 0
	}
	seqs := make([]uint64, 0, l.next-l.low)
	for seq := l.low; seq < l.next; seq++ {
		seqs = append(seqs, seq)
	}
	return seqs
}

// applyStates brings a checkpoint's groups up to date with the state log's
// entries, read in order: each group the entries name is where its latest
// entry puts it. The fingerprint of every entry must be fp.
func applyStates(d *decoded, entries [][]byte, fp string) error {
	latest := map[string]groupState{}
	var order []string
	for i, data := range entries {
		efp, states, err := decodeStates(data)
		if err != nil {
			return fmt.Errorf("state entry %d: %w", i+1, err)
		}
		if efp != fp {
			return fmt.Errorf("state entry %d was written under another configuration (fingerprint %.12s, now %.12s)", i+1, efp, fp)
		}
		for _, st := range states {
			if _, ok := latest[st.key]; !ok {
				order = append(order, st.key)
			}
			latest[st.key] = st
		}
	}
	if len(latest) == 0 {
		return nil
	}
	d.groups = slices.DeleteFunc(d.groups, func(g savedGroup) bool { _, ok := latest[g.key]; return ok })
	d.forgotten = slices.DeleteFunc(d.forgotten, func(f forgottenKey) bool { _, ok := latest[f.key]; return ok })
	d.kept = slices.DeleteFunc(d.kept, func(data []byte) bool {
		sg, err := savedForm(data)
		_, ok := latest[sg.key]
		return ok && err == nil
	})
	for _, key := range order {
		st := latest[key]
		switch st.where {
		case stateOpen:
			sg, _ := savedForm(st.saved) // decodeStates read it whole
			d.groups = append(d.groups, sg)
		case stateKept:
			d.kept = append(d.kept, st.saved)
		case stateForgotten:
			d.forgotten = append(d.forgotten, st.forgotten)
		}
	}
	return nil
}

// change notes that group key was judged or ended: its state goes to the
// state log with the spans passed on next.
func (w *worker[G]) change(key string) {
	if w.s.journal != nil {
		w.changed[key] = struct{}{}
	}
}

// changedStates is a state entry of the groups changed since the last one:
// each where it is now.
func (w *worker[G]) changedStates() []byte {
	cp := w.s.eval.(Checkpointer[G])
	states := make([]groupState, 0, len(w.changed))
	for key := range w.changed {
		st := groupState{key: key, where: stateGone}
		if g, ok := w.groups.Get(key); ok {
			seen, _ := w.groups.Seen(key)
			st.where, st.saved = stateOpen, appendSaved(nil, w.saved(cp, key, seen, g))
		} else if saved, ok := w.dormant.Get(key); ok {
			st.where, st.saved = stateOpen, saved
		} else if saved, ok := w.retained.Get(key); ok {
			st.where, st.saved = stateKept, saved
		} else if reason, ok := w.forgotten.keys.Get(key); ok {
			when, _ := w.forgotten.keys.Seen(key)
			st.where, st.forgotten = stateForgotten, forgottenKey{key: key, reason: reason, when: when}
		}
		states = append(states, st)
	}
	return encodeStates(cp.Fingerprint(), states)
}

// statesAfter is the entries numbered low or above: those written after the
// checkpoint that records low.
func statesAfter(low uint64, seqs []uint64, states [][]byte) [][]byte {
	var after [][]byte
	for i, seq := range seqs {
		if seq >= low {
			after = append(after, states[i])
		}
	}
	return after
}

// markRestored marks every group a checkpoint restores, open or kept.
func markRestored(d *decoded, h History) {
	for i := range d.groups {
		d.groups[i].history |= h
	}
	for i, data := range d.kept {
		if sg, err := savedForm(data); err == nil {
			sg.history |= h
			d.kept[i] = appendSaved(nil, sg)
		}
	}
}

// savedForm decodes one group's saved form, as this version writes it.
func savedForm(data []byte) (savedGroup, error) {
	r := checkpoint.NewReader(data)
	sg := decodeSaved(r, func(string) string { return "" }, checkpointVersion)
	return sg, r.End("")
}
