// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/agentguard/agentguard/internal/checkpoint"
)

// Checkpointer is an Evaluator whose groups' state can be saved and
// restored: with Config.Storage, the stage checkpoints every open group and
// restores them at Start, so that a restart continues each conversation
// where it was.
type Checkpointer[G any] interface {
	// Fingerprint identifies the configuration a saved state is valid
	// under: a checkpoint written under another is not restored.
	Fingerprint() string
	// AppendState appends a group's state to b.
	AppendState(b []byte, g G) []byte
	// RestoreState rebuilds a group's state from what AppendState wrote.
	RestoreState(key string, data []byte) (G, error)
}

// The checkpoint is one value in the storage client, written whole (a
// crash mid-write leaves the previous one), under checkpointKey. Its
// layout, version 6: the magic, the version, whether it was written at a
// shutdown (nothing came after it: a start from it has no warm-up), the
// evaluator's fingerprint, when it was written, then the open groups, least
// recently active first: key, last activity, history marks, latest trace
// start, latest event start, latches, trace and span of the last event,
// service name, the evaluator's state, and the meters' state (budgets,
// repeats); then the groups kept after they ended idle (Retention), in the
// same form, their last activity being when they ended; a group's last
// field is its flags (a trace that is a group of its own; one that ended
// once and was taken up again); then the groups forgotten (ended early, or
// no longer kept: one that comes back is marked partial), least recently
// forgotten first: key, when, and why; last, the number of the first
// state log entry written after it (statelog.go): a start applies only
// entries from there, so that those an older build left undeleted are not.
// Version 1 had no kept groups, versions 1 and 2 no meters, versions 1 to 3
// no flags, versions 1 to 4 no forgotten groups, versions 1 to 5 no state
// log mark (no entry is applied over them).
const (
	checkpointKey     = "groups"
	checkpointMagic   = "agentguard-groups"
	checkpointVersion = 6
)

// savedGroup is a group as a checkpoint holds it.
type savedGroup struct {
	key     string
	seen    int64
	history History
	latest  pcommon.Timestamp
	latestE pcommon.Timestamp // the latest event start judged
	latch   uint64
	trace   pcommon.TraceID
	span    pcommon.SpanID
	service string
	state   []byte
	meters  []byte
	own     bool // a trace that is a group of its own
	ended   bool // one that ended once, taken up again by later spans
}

// The flags of a saved group.
const (
	savedOwn byte = 1 << iota
	savedEnded
)

func appendSaved(b []byte, g savedGroup) []byte {
	b = checkpoint.AppendString(b, g.key)
	b = checkpoint.AppendVarint(b, g.seen)
	b = append(b, byte(g.history))
	b = checkpoint.AppendUvarint(b, uint64(g.latest))
	b = checkpoint.AppendUvarint(b, uint64(g.latestE))
	b = checkpoint.AppendUvarint(b, g.latch)
	b = append(b, g.trace[:]...)
	b = append(b, g.span[:]...)
	b = checkpoint.AppendString(b, g.service)
	b = checkpoint.AppendBytes(b, g.state)
	b = checkpoint.AppendBytes(b, g.meters)
	var flags byte
	if g.own {
		flags |= savedOwn
	}
	if g.ended {
		flags |= savedEnded
	}
	return append(b, flags)
}

// header is a checkpoint's first fields.
type header struct {
	clean       bool
	fingerprint string
	written     time.Time
}

func appendHeader(b []byte, h header, groups int) []byte {
	b = append(b, checkpointMagic...)
	b = checkpoint.AppendUvarint(b, checkpointVersion)
	b = checkpoint.AppendBool(b, h.clean)
	b = checkpoint.AppendString(b, h.fingerprint)
	b = checkpoint.AppendVarint(b, h.written.UnixNano())
	return checkpoint.AppendUvarint(b, uint64(groups))
}

// minSavedGroup is the fewest bytes a saved group takes.
const minSavedGroup = 1 + 1 + 1 + 1 + 1 + 1 + 16 + 8 + 1 + 1 + 1

// decoded is a checkpoint as read: its open groups, the kept ones each in
// its saved form, and the forgotten ones.
type decoded struct {
	header
	groups    []savedGroup
	kept      [][]byte
	forgotten []forgottenKey
	stateLow  uint64 // the first state entry written after it; versions 1 to 5: none applies
}

// forgottenKey is a forgotten group as a checkpoint holds it.
type forgottenKey struct {
	key, reason string
	when        int64 // unix nanoseconds
}

// decodeCheckpoint reads a checkpoint; every error names the field.
func decodeCheckpoint(data []byte) (decoded, error) {
	var d decoded
	if !bytes.HasPrefix(data, []byte(checkpointMagic)) {
		return d, errors.New("not an agentguard checkpoint (no magic)")
	}
	r := checkpoint.NewReader(data[len(checkpointMagic):])
	v := r.Uvarint("version")
	if r.Err() == nil && (v < 1 || v > checkpointVersion) {
		return d, fmt.Errorf("version %d: this build reads versions 1 to %d", v, checkpointVersion)
	}
	d.clean = r.Bool("clean")
	d.fingerprint = r.String("fingerprint")
	d.written = time.Unix(0, r.Varint("written"))
	d.groups = decodeGroups(r, "group", v)
	if v >= 2 {
		n := r.Count("kept groups", minSavedGroup)
		for i := 0; i < n && r.Err() == nil; i++ {
			d.kept = append(d.kept, recoded(r.Bytes(fmt.Sprintf("kept group %d", i+1)), v))
		}
	}
	if v >= 5 {
		n := r.Count("forgotten groups", 3)
		for i := 0; i < n && r.Err() == nil; i++ {
			f := forgottenKey{key: r.String(fmt.Sprintf("forgotten group %d: key", i+1)), when: r.Varint(fmt.Sprintf("forgotten group %d: when", i+1))}
			f.reason = r.String(fmt.Sprintf("forgotten group %d: reason", i+1))
			d.forgotten = append(d.forgotten, f)
		}
	}
	d.stateLow = math.MaxUint64
	if v >= 6 {
		d.stateLow = r.Uvarint("state log mark")
	}
	if err := r.End("groups"); err != nil {
		return decoded{}, err
	}
	return d, nil
}

// appendForgotten appends a forgotten group.
func appendForgotten(b []byte, f forgottenKey) []byte {
	b = checkpoint.AppendString(b, f.key)
	b = checkpoint.AppendVarint(b, f.when)
	return checkpoint.AppendString(b, f.reason)
}

// recoded is a kept group saved under an older version, in this version's
// form (kept groups are decoded when their group comes back, as this
// version wrote them); unreadable data is left as it is, for that decoding
// to report.
func recoded(data []byte, version uint64) []byte {
	if version == checkpointVersion || data == nil {
		return data
	}
	r := checkpoint.NewReader(data)
	sg := decodeSaved(r, func(string) string { return "" }, version)
	if r.End("") != nil {
		return data
	}
	return appendSaved(nil, sg)
}

// decodeGroups reads a count of saved groups, then the groups, as version
// wrote them.
func decodeGroups(r *checkpoint.Reader, what string, version uint64) []savedGroup {
	n := r.Count(what+"s", minSavedGroup)
	var gs []savedGroup
	for i := range n {
		g := decodeSaved(r, func(name string) string { return fmt.Sprintf("%s %d: %s", what, i+1, name) }, version)
		if r.Err() != nil {
			break
		}
		gs = append(gs, g)
	}
	return gs
}

// decodeSaved reads one saved group as version wrote it; field names a
// field for errors.
func decodeSaved(r *checkpoint.Reader, field func(string) string, version uint64) savedGroup {
	var g savedGroup
	g.key = r.String(field("key"))
	g.seen = r.Varint(field("last activity"))
	if hb := r.Fixed(field("history"), 1); hb != nil {
		if g.history = History(hb[0]); g.history&^(HistoryPartial|HistoryOutOfOrder) != 0 {
			r.Fail(field("history"), fmt.Errorf("unknown marks %#x", hb[0]))
		}
	}
	g.latest = pcommon.Timestamp(r.Uvarint(field("latest trace start")))
	g.latestE = pcommon.Timestamp(r.Uvarint(field("latest event start")))
	g.latch = r.Uvarint(field("latches"))
	copy(g.trace[:], r.Fixed(field("trace ID"), 16))
	copy(g.span[:], r.Fixed(field("span ID"), 8))
	g.service = r.String(field("service"))
	g.state = r.Bytes(field("state"))
	if version >= 3 {
		g.meters = r.Bytes(field("meters"))
	}
	if version >= 4 {
		if fb := r.Fixed(field("flags"), 1); fb != nil {
			if fb[0]&^(savedOwn|savedEnded) != 0 {
				r.Fail(field("flags"), fmt.Errorf("unknown flags %#x", fb[0]))
			}
			g.own, g.ended = fb[0]&savedOwn != 0, fb[0]&savedEnded != 0
		}
	}
	return g
}

// openStorage finds the storage extension and restores the checkpoint it
// holds, and says whether history was lost: the checkpoint is a crash's
// (what came after it is gone), or it cannot be restored (corrupt, another
// version, another configuration: logged and left to be overwritten; the
// collector starts). Then the warm-up marks what may be missing. No
// checkpoint at all is a first start: nothing was lost. A storage that
// cannot be opened or read is logged, and the collector starts without it.
func (s *Stage[G]) openStorage(ctx context.Context, host component.Host) (lost bool, err error) {
	id := *s.cfg.Storage
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return false, fmt.Errorf("storage: no extension %q is running: configure it under extensions and list it in service::extensions", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return false, fmt.Errorf("storage: extension %q is not a storage extension (it is a %s)", id, id.Type())
	}
	if s.store, err = se.GetClient(ctx, component.KindProcessor, s.cfg.ID, ""); err != nil {
		// A damaged file (truncated, corrupt) must not keep the collector
		// down: it starts without checkpoints, and says so.
		s.store = nil
		s.tel.Checkpoints.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrResult, ResultError)))
		s.logger.Error("the storage cannot be opened: starting without checkpoints (a shutdown ends every group, a crash loses them); its conversations' verdicts are marked partial in the warm-up. Move the damaged file aside (file_storage's recreate: true does it for a corrupt database) and restart to checkpoint again",
			zap.Stringer("storage", id), zap.Error(err))
		return true, nil
	}
	s.states = newStateLog()
	seqs, states, err := s.states.read(ctx, s.store)
	statesLost := err != nil
	if statesLost {
		s.logger.Error("the state of the groups judged after the last checkpoint cannot be read: the groups are restored as the checkpoint holds them, their verdicts marked partial",
			zap.Stringer("storage", id), zap.Error(err))
		seqs, states = s.states.unread(), nil
	}
	s.subsumed = seqs
	data, err := s.store.Get(ctx, checkpointKey)
	if err != nil {
		s.logger.Error("the checkpoint cannot be read: starting without it; its conversations' verdicts are marked partial in the warm-up",
			zap.Stringer("storage", id), zap.Error(err))
		s.unreadAtStart = true
		return true, nil
	}
	if data == nil && len(states) == 0 {
		if statesLost {
			return true, nil
		}
		s.logger.Info("no checkpoint in storage: a first start", zap.Stringer("storage", id))
		return false, nil
	}
	clean, n, err := s.restore(data, seqs, states, statesLost)
	if err != nil {
		s.logger.Error("the checkpoint in storage cannot be restored: starting without it; its conversations' verdicts are marked partial in the warm-up",
			zap.Stringer("storage", id), zap.Int("bytes", len(data)), zap.Error(err))
		return true, nil
	}
	s.tel.GroupsRestored.Add(ctx, int64(n))
	s.logger.Info("restored the open groups from the checkpoint", zap.Stringer("storage", id), zap.Int("groups", n), zap.Bool("clean_shutdown", clean))
	return !clean, nil
}

// restore puts a checkpoint's groups back in their workers, brought up to
// date with the state log's entries (a crash's: the groups judged after
// the checkpoint), before the workers run. Nothing is restored unless
// everything decodes. Entries but no checkpoint: a crash before the first.
// statesLost: the log could not be read, and every group restored is
// marked partial.
func (s *Stage[G]) restore(data []byte, seqs []uint64, states [][]byte, statesLost bool) (clean bool, n int, err error) {
	cp := s.eval.(Checkpointer[G])
	d := decoded{header: header{fingerprint: cp.Fingerprint()}}
	if data != nil {
		if d, err = decodeCheckpoint(data); err != nil {
			return false, 0, err
		}
		states = statesAfter(d.stateLow, seqs, states)
	}
	if d.fingerprint != cp.Fingerprint() {
		return false, 0, fmt.Errorf("it was written under another configuration (predicates, assertions, grouping or property changed: fingerprint %.12s, now %.12s)", d.fingerprint, cp.Fingerprint())
	}
	if statesLost {
		d.clean = false
		markRestored(&d, HistoryPartial)
	}
	if len(states) > 0 {
		// A crash's: the warm-up marks what it may have lost.
		d.clean = false
		if err := applyStates(&d, states, cp.Fingerprint()); err != nil {
			s.logger.Error("the state of the groups judged after the checkpoint cannot be restored: they are restored as the checkpoint holds them, their verdicts marked partial", zap.Error(err))
			markRestored(&d, HistoryPartial)
		}
	}
	h, saved, kept := d.header, d.groups, d.kept
	type restored struct {
		saved savedGroup
		g     *group[G]
	}
	rs := make([]restored, 0, len(saved))
	keys := make(map[string]bool, len(saved))
	for i, sg := range saved {
		if keys[sg.key] {
			return false, 0, fmt.Errorf("group %q saved twice", sg.key)
		}
		keys[sg.key] = true
		g, err := s.workers[s.workerOf(sg.key)].restored(sg)
		if err != nil {
			return false, 0, fmt.Errorf("group %d (%s): %w", i+1, sg.key, err)
		}
		rs = append(rs, restored{sg, g})
	}
	keptGroups, err := decodeKept(kept)
	if err != nil {
		return false, 0, err
	}
	// Everything decoded: only now is anything put back, each worker's in
	// the order it happened (the workers may be more or fewer than when it
	// was written: their parts interleave), within each worker's bound.
	slices.SortStableFunc(d.forgotten, func(a, b forgottenKey) int { return cmp.Compare(a.when, b.when) })
	for _, f := range d.forgotten {
		s.workers[s.workerOf(f.key)].forgotten.add(f.key, f.reason, time.Unix(0, f.when))
	}
	byEnd := make([]int, len(keptGroups))
	for i := range byEnd {
		byEnd[i] = i
	}
	slices.SortStableFunc(byEnd, func(a, b int) int { return cmp.Compare(keptGroups[a].seen, keptGroups[b].seen) })
	for _, i := range byEnd {
		sg := keptGroups[i]
		w := s.workers[s.workerOf(sg.key)]
		w.retained.Touch(sg.key, time.Unix(0, sg.seen), func() []byte { return kept[i] })
		w.held.add(sg.key)
		for w.retained.Len() > w.maxGroups {
			oldest := w.retained.Oldest()
			w.retained.Remove(oldest)
			w.held.remove(oldest)
			w.forgotten.add(oldest, markRetention, time.Unix(0, sg.seen))
		}
	}
	// Each worker's groups in the order of their last activity, as they
	// were: the workers may be more or fewer than when it was written.
	slices.SortStableFunc(rs, func(a, b restored) int { return int(min(max(a.saved.seen-b.saved.seen, -1), 1)) })
	for _, r := range rs {
		w := s.workers[s.workerOf(r.saved.key)]
		w.groups.Touch(r.saved.key, time.Unix(0, r.saved.seen), func() *group[G] { return r.g })
		w.held.add(r.saved.key)
		s.opened(1)
	}
	return h.clean, len(rs), nil
}

// decodeKept decodes a checkpoint's kept groups (ended, kept for
// retention), each put back later in its saved form, oldest first.
func decodeKept(kept [][]byte) ([]savedGroup, error) {
	out := make([]savedGroup, 0, len(kept))
	for i, data := range kept {
		r := checkpoint.NewReader(data)
		sg := decodeSaved(r, func(name string) string { return fmt.Sprintf("kept group %d: %s", i+1, name) }, checkpointVersion)
		if err := r.End(fmt.Sprintf("kept group %d", i+1)); err != nil {
			return nil, err
		}
		out = append(out, sg)
	}
	return out, nil
}

// snapshot saves the worker's open groups and its kept ones into p; it
// runs on the worker.
func (w *worker[G]) snapshot(p *part) {
	cp := w.s.eval.(Checkpointer[G])
	w.dormant.Each(func(_ string, _ int64, saved []byte) { // saved as a checkpoint saves them
		p.data = append(p.data, saved...)
		p.groups++
	})
	w.groups.Each(func(key string, seen int64, g *group[G]) {
		p.data = appendSaved(p.data, w.saved(cp, key, seen, g))
		p.groups++
	})
	w.retained.Each(func(_ string, _ int64, saved []byte) {
		p.kept = checkpoint.AppendBytes(p.kept, saved)
		p.keptGroups++
	})
	w.forgotten.keys.Each(func(key string, when int64, reason string) {
		p.forgotten = appendForgotten(p.forgotten, forgottenKey{key: key, reason: reason, when: when})
		p.forgottenGroups++
	})
	p.journalBehind = len(w.unforgotten) > 0
	p.states, w.states = w.states, nil
}

// part is one worker's groups in a checkpoint: the open ones, the kept
// ones (each length-prefixed), and the forgotten ones.
type part struct {
	data, kept, forgotten               []byte
	groups, keptGroups, forgottenGroups int
	journalBehind                       bool     // entries of spans it judged are still in the journal
	states                              []uint64 // the state entries it wrote before: the checkpoint holds their effect
}

// checkpoint has every worker save its groups, after what was handed to it
// before, and writes them in one value. clean: nothing comes after it (the
// stage is shutting down).
func (s *Stage[G]) checkpoint(ctx context.Context, now time.Time, clean bool) {
	parts := make([]part, len(s.workers))
	var done sync.WaitGroup
	s.dispatch(nil, nil, work[G]{now: now, all: true, done: &done, snapshot: parts})
	done.Wait()
	for _, p := range parts {
		s.subsumed = append(s.subsumed, p.states...)
	}
	total, kept, forgotten, size := 0, 0, 0, 0
	for _, p := range parts {
		if p.journalBehind {
			// A start would judge their spans again on top of their effect.
			s.tel.Checkpoints.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrResult, ResultError)))
			s.Warnings.Once("checkpoint-journal", "a checkpoint was not written: the journal still holds spans already judged; the previous checkpoint stays in storage")
			return
		}
		total += p.groups
		kept += p.keptGroups
		forgotten += p.forgottenGroups
		size += len(p.data) + len(p.kept) + len(p.forgotten)
	}
	fp := s.eval.(Checkpointer[G]).Fingerprint()
	b := appendHeader(make([]byte, 0, size+len(checkpointMagic)+len(fp)+40), header{clean: clean, fingerprint: fp, written: now}, total)
	for _, p := range parts {
		b = append(b, p.data...)
	}
	b = checkpoint.AppendUvarint(b, uint64(kept))
	for _, p := range parts {
		b = append(b, p.kept...)
	}
	b = checkpoint.AppendUvarint(b, uint64(forgotten))
	for _, p := range parts {
		b = append(b, p.forgotten...)
	}
	stateLow := s.states.lowAfter(s.subsumed)
	b = checkpoint.AppendUvarint(b, stateLow)
	s.lastCheckpoint = now
	result := ResultOK
	ops := []*storage.Operation{storage.SetOperation(checkpointKey, b), storage.SetOperation(journalLowKey, encodeSeq(s.journal.low()))}
	if err := s.store.Batch(ctx, s.states.deleteOps(ops, s.subsumed, stateLow)...); err != nil {
		result = ResultError
		s.Warnings.Once("checkpoint", "writing the checkpoint failed; the previous one stays in storage", zap.Error(err))
	} else {
		s.states.dropped(s.subsumed)
		s.subsumed = nil
	}
	s.tel.Checkpoints.Add(ctx, 1, metric.WithAttributes(attribute.String(AttrResult, result)))
	if result == ResultOK && s.cfg.AfterCheckpoint != nil {
		s.cfg.AfterCheckpoint()
	}
}
