// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentguard/agentguard/internal/checkpoint"
	"github.com/agentguard/agentguard/internal/checkpoint/checkpointtest"
)

// The recorder's groups are checkpointed as their key.
func (r *recorder) Fingerprint() string { return "recorder" }

func (r *recorder) AppendState(b []byte, g *recGroup) []byte {
	return checkpoint.AppendString(b, g.key)
}

func (r *recorder) RestoreState(key string, data []byte) (*recGroup, error) {
	rd := checkpoint.NewReader(data)
	saved := rd.String("key")
	if err := rd.End("state"); err != nil {
		return nil, err
	}
	if saved != key {
		return nil, errors.New("key mismatch")
	}
	return &recGroup{key: key}, nil
}

var (
	storageID = component.MustNewID("file_storage")
	stageID   = component.MustNewIDWithName("temporalcheck", "t")
)

func storageConfig() Config {
	cfg := baseConfig()
	cfg.Storage, cfg.ID, cfg.CheckpointEvery, cfg.WarmUp = &storageID, stageID, 10*time.Second, time.Minute
	return cfg
}

// startWith starts a stage on the store; first: no collector ran before it
// (no warm-up).
func startWith(t *testing.T, store *checkpointtest.Store, r *recorder, clock *time.Time, first bool) *Stage[*recGroup] {
	t.Helper()
	cfg := storageConfig()
	if first {
		cfg.WarmUp = 0
	}
	return startOn(t, store, cfg, r, new(consumertest.TracesSink), clock)
}

// startOn starts a stage of cfg on the store, passing on to next, its clock
// halted (the test's Tick is the only one).
func startOn(t *testing.T, store *checkpointtest.Store, cfg Config, r Evaluator[*recGroup], next consumer.Traces, clock *time.Time) *Stage[*recGroup] {
	t.Helper()
	s := newTestStage(t, cfg, r, next)
	s.UseClock(func() time.Time { return *clock })
	if err := s.Start(context.Background(), store.Host(storageID)); err != nil {
		t.Fatal(err)
	}
	s.clock.halt()                                             // the test's Tick is the only clock
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) }) // a stage the test killed too
	return s
}

// restartOn starts a stage of cfg, with a recorder of its own, on the store
// a stopped or killed one left.
func restartOn(t *testing.T, store *checkpointtest.Store, cfg Config, clock *time.Time) (*Stage[*recGroup], *recorder) {
	t.Helper()
	r := newRecorder()
	return startOn(t, store, cfg, r, new(consumertest.TracesSink), clock), r
}

// shutDownHolding runs a first collector on the store that takes one turn
// of each conversation and shuts down: the store then holds a shutdown's
// checkpoint of them.
func shutDownHolding(t *testing.T, store *checkpointtest.Store, clock *time.Time, convs ...string) {
	t.Helper()
	s := startWith(t, store, newRecorder(), clock, true)
	for turn, conv := range convs {
		feed(t, s, clock, turn, conv)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A shutdown checkpoints the open groups instead of ending them; the next
// start restores them, unmarked, with no warm-up (nothing came after).
func TestShutdownCheckpointRestoresEveryGroup(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	r := newRecorder()
	s := startWith(t, store, r, &clock, true)
	for turn, conv := range []string{"a", "b", "c", "a"} {
		feed(t, s, &clock, turn, conv)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(r.ended) != 0 {
		t.Errorf("groups ended at a shutdown with storage: %v", r.ended)
	}
	s2, r2 := restartOn(t, store, storageConfig(), &clock)
	if s2.OpenGroups() != 3 {
		t.Fatalf("%d groups restored, want 3", s2.OpenGroups())
	}
	feed(t, s2, &clock, 4, "b")
	feed(t, s2, &clock, 5, "d") // new, after a clean shutdown: complete
	if !r2.marks["b"].Complete() || !r2.marks["d"].Complete() {
		t.Errorf("marks after a clean restart: %v", r2.marks)
	}
	// The restored group keeps its latest trace: an older turn redelivered
	// now is out of order.
	feed(t, s2, &clock, 1, "a")
	if r2.marks["a"] != HistoryOutOfOrder {
		t.Errorf("turn 1 of a after the restart: %v, want out_of_order", r2.marks["a"])
	}
}

// A crash loses nothing judged: a group judged before the last periodic
// checkpoint is restored from it, one judged after it from the state log
// (its latest trace kept: an older turn redelivered is out of order, as
// without the crash), and a group it never held is new in the warm-up, and
// partial.
func TestCrashRestoresWhatWasJudged(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	s := startWith(t, store, newRecorder(), &clock, true)
	feed(t, s, &clock, 0, "a")
	clock = clock.Add(10 * time.Second)
	s.Tick(clock) // a checkpoint is due
	feed(t, s, &clock, 2, "b")
	// killed: no Shutdown, nothing more written.
	s2, r2 := restartOn(t, store, storageConfig(), &clock)
	if s2.OpenGroups() != 2 {
		t.Fatalf("%d groups restored, want 2", s2.OpenGroups())
	}
	feed(t, s2, &clock, 3, "a")
	feed(t, s2, &clock, 1, "b")
	feed(t, s2, &clock, 4, "c")
	if !r2.marks["a"].Complete() || r2.marks["b"] != HistoryOutOfOrder || r2.marks["c"] != HistoryPartial {
		t.Errorf("after the crash: a %v (want complete), b %v (want out_of_order), c %v (want partial)", r2.marks["a"], r2.marks["b"], r2.marks["c"])
	}
}

// A crash before the first periodic checkpoint: the groups judged are
// restored from the state log over the checkpoint the start wrote (which
// holds none); a checkpoint then holds them, and deletes the log's entries
// in the batch that writes it.
func TestCrashBeforeTheFirstCheckpoint(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	s := startWith(t, store, newRecorder(), &clock, true)
	feed(t, s, &clock, 2, "a")
	feed(t, s, &clock, 3, "b")
	// killed: no Shutdown, nothing more written.
	s2, r2 := restartOn(t, store, storageConfig(), &clock)
	if s2.OpenGroups() != 2 {
		t.Fatalf("%d groups restored from the state log, want 2", s2.OpenGroups())
	}
	feed(t, s2, &clock, 1, "a")
	if r2.marks["a"] != HistoryOutOfOrder {
		t.Errorf("a's older turn after the crash: %v, want out_of_order", r2.marks["a"])
	}
	if err := s2.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, k := range store.Keys(stageID) {
		if strings.HasPrefix(k, stateEntryPrefix) {
			t.Errorf("state entry %q left after the checkpoint that holds its effect", k)
		}
	}
}

// A crash before any turn was judged is a crash all the same: a start
// writes a checkpoint that is not a shutdown's at once, so the start after
// the crash finds it and starts a warm-up, after a first start as after a
// clean restart (what components ahead of the processor held is lost with
// the process; only a shutdown passes it on).
func TestACrashBeforeAnyTurnStartsAWarmUp(t *testing.T) {
	for _, after := range []string{"a first start", "a clean restart"} {
		store := checkpointtest.NewStore()
		clock := time.Unix(1_800_000_000, 0)
		if after == "a clean restart" {
			shutDownHolding(t, store, &clock, "a")
		}
		startWith(t, store, newRecorder(), &clock, after == "a first start") // killed before any turn
		s, r := restartOn(t, store, storageConfig(), &clock)
		feed(t, s, &clock, 1, "new")
		if r.marks["new"] != HistoryPartial {
			t.Errorf("a conversation first seen after a crash that followed %s: %v, want partial", after, r.marks["new"])
		}
	}
}

// A start that cannot read the checkpoint in storage writes none over it:
// a restart once the disk reads again finds it.
func TestAStartThatCannotReadTheCheckpointLeavesIt(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	shutDownHolding(t, store, &clock, "a")
	before := store.Get(stageID, checkpointKey)
	store.GetFail = errors.New("input/output error")
	startWith(t, store, newRecorder(), &clock, false)
	store.GetFail = nil
	if after := store.Get(stageID, checkpointKey); !bytes.Equal(after, before) {
		t.Error("the start wrote a checkpoint over the one it could not read")
	}
	if s, _ := restartOn(t, store, storageConfig(), &clock); s.OpenGroups() != 1 {
		t.Errorf("%d groups restored once the disk reads again, want a", s.OpenGroups())
	}
}

// A checkpoint that cannot be restored does not stop the start: it is
// logged, nothing of it is restored, and the warm-up marks the groups.
func TestBadCheckpointStartsWithout(t *testing.T) {
	for name, data := range map[string][]byte{
		"garbage":   []byte("not a checkpoint"),
		"version":   checkpoint.AppendUvarint([]byte(checkpointMagic), 99),
		"config":    checkpoint.AppendUvarint(appendHeader(nil, header{fingerprint: "another"}, 0), 0),
		"truncated": appendHeader(nil, header{fingerprint: "recorder"}, 1),
	} {
		store := checkpointtest.NewStore()
		store.Put(stageID, checkpointKey, data)
		clock := time.Unix(1_800_000_000, 0)
		r := newRecorder()
		s := startWith(t, store, r, &clock, false)
		feed(t, s, &clock, 0, "a")
		if s.OpenGroups() != 1 || r.marks["a"] != HistoryPartial {
			t.Errorf("%s: %d groups, a %v", name, s.OpenGroups(), r.marks["a"])
		}
		s.Shutdown(context.Background())
	}
}

// A storage that cannot be opened (a truncated or corrupt file) does not
// keep the collector down: it starts without checkpoints, its new groups
// marked in the warm-up, and a shutdown ends them as without storage.
func TestStorageThatCannotBeOpenedStartsWithout(t *testing.T) {
	store := checkpointtest.NewStore()
	store.OpenFail = errors.New("file size too small 5000")
	clock := time.Unix(1_800_000_000, 0)
	s, r := restartOn(t, store, storageConfig(), &clock)
	feed(t, s, &clock, 0, "a")
	if s.OpenGroups() != 1 || r.marks["a"] != HistoryPartial {
		t.Errorf("%d groups, a %v: want one, marked partial", s.OpenGroups(), r.marks["a"])
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if store.Sets != 0 || s.OpenGroups() != 0 {
		t.Errorf("%d checkpoints written, %d groups open after the shutdown; want none, every group ended", store.Sets, s.OpenGroups())
	}
}

// Every error names the field, and the version and configuration errors
// say what differs.
func TestCheckpointErrorsNameTheField(t *testing.T) {
	good := appendHeader(nil, header{clean: true, fingerprint: "f", written: time.Unix(5, 0)}, 1)
	good = appendSaved(good, savedGroup{key: "conv", seen: 7, history: HistoryOutOfOrder, latest: 9, latch: 1,
		trace: pcommon.TraceID{1}, span: pcommon.SpanID{2}, service: "svc", state: []byte("st"), own: true, ended: true})
	groupsEnd := len(good)
	kept := appendSaved(nil, savedGroup{key: "paused", seen: 8, state: []byte("k")})
	good = checkpoint.AppendBytes(checkpoint.AppendUvarint(good, 1), kept)
	keptEnd := len(good)
	gone := forgottenKey{key: "ended-early", reason: markBound, when: 6}
	good = appendForgotten(checkpoint.AppendUvarint(good, 1), gone)
	forgottenEnd := len(good)
	good = checkpoint.AppendUvarint(good, 300) // the state log's mark
	d, err := decodeCheckpoint(good)
	h, gs, ks := d.header, d.groups, d.kept
	if err != nil || !h.clean || h.fingerprint != "f" || len(gs) != 1 || gs[0].key != "conv" || gs[0].latest != 9 ||
		gs[0].history != HistoryOutOfOrder || gs[0].service != "svc" || string(gs[0].state) != "st" || gs[0].span != (pcommon.SpanID{2}) || !gs[0].own || !gs[0].ended ||
		len(ks) != 1 || !bytes.Equal(ks[0], kept) || len(d.forgotten) != 1 || d.forgotten[0] != gone || d.stateLow != 300 {
		t.Fatalf("round trip: %+v %+v %v %+v %v", h, gs, ks, d.forgotten, err)
	}
	for cut, want := range map[int]string{groupsEnd - 1: "group 1: flags", groupsEnd - 2: "group 1: meters", groupsEnd - 3: "group 1: state", groupsEnd - 13: "groups",
		keptEnd - 1: "kept group 1", groupsEnd: "kept groups", keptEnd: "forgotten groups", forgottenEnd - 1: "forgotten group 1: reason", len(good) - 1: "state log mark"} {
		if _, err := decodeCheckpoint(good[:cut]); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("cut at %d: %v, want %q", cut, err, want)
		}
	}
	if _, err := decodeCheckpoint(append(bytes.Clone(good), 0)); err == nil || !strings.Contains(err.Error(), "left over") {
		t.Errorf("trailing byte: %v", err)
	}
}

// savedAs is g as an older version saved it: without the fields added
// since (empty here: a byte each).
func savedAs(version int, g savedGroup) []byte {
	b := appendSaved(nil, g)
	switch version {
	case 1, 2:
		return b[:len(b)-2] // no meters, no flags
	case 3:
		return b[:len(b)-1] // no flags
	}
	return b
}

// A version 1 checkpoint (no kept groups) is still read.
func TestVersion1CheckpointIsRead(t *testing.T) {
	v1 := append([]byte(checkpointMagic), checkpoint.AppendUvarint(nil, 1)...)
	v1 = checkpoint.AppendBool(v1, true)
	v1 = checkpoint.AppendString(v1, "f")
	v1 = checkpoint.AppendVarint(v1, 5)
	v1 = append(checkpoint.AppendUvarint(v1, 1), savedAs(1, savedGroup{key: "conv", state: []byte("st")})...)
	d, err := decodeCheckpoint(v1)
	h, gs, ks := d.header, d.groups, d.kept
	if err != nil || !h.clean || len(gs) != 1 || gs[0].key != "conv" || len(ks) != 0 {
		t.Fatalf("version 1: %+v %+v %v %v", h, gs, ks, err)
	}
}

// Version 2, 3 and 4 checkpoints (no meters, no flags, no forgotten groups)
// are still read, their
// kept groups rewritten in this version's form, which is how they are
// decoded when their group comes back.
func TestOlderCheckpointsAreRead(t *testing.T) {
	for _, version := range []int{2, 3, 4} {
		old := append([]byte(checkpointMagic), checkpoint.AppendUvarint(nil, uint64(version))...)
		old = checkpoint.AppendBool(old, true)
		old = checkpoint.AppendString(old, "f")
		old = checkpoint.AppendVarint(old, 5)
		old = append(checkpoint.AppendUvarint(old, 1), savedAs(version, savedGroup{key: "conv", state: []byte("st")})...)
		keptNow := appendSaved(nil, savedGroup{key: "paused", state: []byte("k")})
		old = checkpoint.AppendBytes(checkpoint.AppendUvarint(old, 1), savedAs(version, savedGroup{key: "paused", state: []byte("k")}))
		d, err := decodeCheckpoint(old)
		gs, ks := d.groups, d.kept
		if err != nil || len(gs) != 1 || gs[0].key != "conv" || len(ks) != 1 || !bytes.Equal(ks[0], keptNow) {
			t.Fatalf("version %d: %+v %q %v", version, gs, ks, err)
		}
	}
}

// The decoder is a parser of what a disk hands back: it never panics, and
// what it accepts it writes back the same.
func FuzzDecodeCheckpoint(f *testing.F) {
	good := appendHeader(nil, header{fingerprint: "f"}, 1)
	good = appendSaved(good, savedGroup{key: "k", service: "s", state: []byte{1}})
	f.Add(checkpoint.AppendUvarint(checkpoint.AppendUvarint(checkpoint.AppendUvarint(bytes.Clone(good), 0), 0), 7))
	withKept := checkpoint.AppendBytes(checkpoint.AppendUvarint(good, 1), appendSaved(nil, savedGroup{key: "p"}))
	f.Add(checkpoint.AppendUvarint(appendForgotten(checkpoint.AppendUvarint(withKept, 1), forgottenKey{key: "g", reason: markRetention, when: 3}), 0))
	f.Add([]byte(checkpointMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := decodeCheckpoint(data)
		if err != nil {
			return
		}
		again := appendHeader(nil, d.header, len(d.groups))
		for _, g := range d.groups {
			again = appendSaved(again, g)
		}
		again = checkpoint.AppendUvarint(again, uint64(len(d.kept)))
		for _, k := range d.kept {
			again = checkpoint.AppendBytes(again, k)
		}
		again = checkpoint.AppendUvarint(again, uint64(len(d.forgotten)))
		for _, f := range d.forgotten {
			again = appendForgotten(again, f)
		}
		again = checkpoint.AppendUvarint(again, d.stateLow)
		d2, err := decodeCheckpoint(again)
		if err != nil || d2.header != d.header || len(d2.groups) != len(d.groups) || len(d2.kept) != len(d.kept) || !slices.Equal(d2.forgotten, d.forgotten) || d2.stateLow != d.stateLow {
			t.Fatalf("re-encoded checkpoint does not decode the same: %v", err)
		}
	})
}

// A checkpoint that names a group twice restores nothing, not the groups
// before the second: the start goes on without it, and every group is new.
func TestCheckpointWithAGroupTwiceRestoresNothing(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	shutDownHolding(t, store, &clock, "a", "b")
	data := store.Get(stageID, checkpointKey)
	d, err := decodeCheckpoint(data)
	h, saved := d.header, d.groups
	if err != nil || len(saved) != 2 {
		t.Fatalf("the checkpoint written: %d groups, %v", len(saved), err)
	}
	twice := appendHeader(nil, h, 3)
	for _, g := range append(saved, saved[1]) {
		twice = appendSaved(twice, g)
	}
	twice = checkpoint.AppendUvarint(checkpoint.AppendUvarint(twice, 0), 0) // no kept groups, none forgotten
	store.Put(stageID, checkpointKey, twice)

	s2, r := restartOn(t, store, storageConfig(), &clock)
	if n := s2.OpenGroups(); n != 0 {
		t.Fatalf("%d groups restored from a checkpoint that cannot be, want 0", n)
	}
	feed(t, s2, &clock, 2, "a")
	if r.marks["a"] != HistoryPartial {
		t.Errorf("a after the start without the checkpoint: %v, want partial", r.marks["a"])
	}
}

// A group forgotten before a clean shutdown (here: ended idle, no retention)
// is still forgotten after the restart: when it comes back it is marked
// partial, as it would have been without the restart.
func TestForgottenGroupsOutliveARestart(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	s := startWith(t, store, newRecorder(), &clock, true)
	feed(t, s, &clock, 0, "gone")
	clock = clock.Add(2 * time.Minute)
	s.Tick(clock) // ended idle, not kept: forgotten
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	s2, r := restartOn(t, store, storageConfig(), &clock)
	feed(t, s2, &clock, 1, "gone")
	feed(t, s2, &clock, 2, "new")
	if r.marks["gone"] != HistoryPartial || r.marks["new"] != 0 {
		t.Errorf("after a clean restart: %v; want the forgotten group partial, a new one complete", r.marks)
	}
}

// Kept groups come back from a checkpoint in the order they ended, whatever
// order it holds them in (its workers' parts interleave when the workers
// are more or fewer than when it was written): the one that ended first
// expires first, and the one within the retention stays.
func TestKeptGroupsAreRestoredInTheOrderTheyEnded(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	cp := appendHeader(nil, header{clean: true, fingerprint: "recorder", written: clock}, 0)
	cp = checkpoint.AppendUvarint(cp, 2)
	for _, g := range []struct {
		key string
		ago time.Duration
	}{{"newer", 5 * time.Minute}, {"older", 50 * time.Minute}} {
		saved := savedGroup{key: g.key, seen: clock.Add(-g.ago).UnixNano(), state: checkpoint.AppendString(nil, g.key)}
		cp = checkpoint.AppendBytes(cp, appendSaved(nil, saved))
	}
	store.Put(stageID, checkpointKey, checkpoint.AppendUvarint(checkpoint.AppendUvarint(cp, 0), 0)) // no forgotten groups; the state log from 0
	cfg := storageConfig()
	cfg.Retention, cfg.WarmUp = time.Hour, 0
	r := newRecorder()
	s := startOn(t, store, cfg, r, new(consumertest.TracesSink), &clock)
	defer s.Shutdown(context.Background())
	clock = clock.Add(20 * time.Minute) // the older ended 70 minutes ago, past the retention; the newer 25
	s.Tick(clock)
	feed(t, s, &clock, 1, "older")
	feed(t, s, &clock, 1, "newer")
	if r.marks["older"] != HistoryPartial || r.marks["newer"] != 0 {
		t.Errorf("after the retention of the older: %v; want it partial, the newer continued", r.marks)
	}
}

// A group that ended after the last checkpoint stays ended through a crash:
// not ended a second time (its end-of-group verdicts were passed on), and
// its return marked partial, as without the crash.
func TestAGroupEndedAfterTheCheckpointStaysEndedThroughACrash(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	cfg := storageConfig()
	cfg.CheckpointEvery, cfg.WarmUp = 50*time.Second, 0 // group_timeout is a minute
	s := startOn(t, store, cfg, newRecorder(), new(consumertest.TracesSink), &clock)
	feed(t, s, &clock, 0, "gone")
	clock = clock.Add(50 * time.Second)
	s.Tick(clock) // a checkpoint holds it open
	clock = clock.Add(15 * time.Second)
	s.Tick(clock) // ended idle, not kept: forgotten; no checkpoint is due
	// killed: no Shutdown, nothing more written.
	s2, r2 := restartOn(t, store, storageConfig(), &clock)
	if s2.OpenGroups() != 0 {
		t.Errorf("%d groups open after the crash, want none", s2.OpenGroups())
	}
	clock = clock.Add(2 * time.Minute)
	s2.Tick(clock)
	if len(r2.ended) != 0 {
		t.Errorf("ended again after the crash: %v", r2.ended)
	}
	feed(t, s2, &clock, 1, "gone")
	if r2.marks["gone"] != HistoryPartial {
		t.Errorf("its return after the crash: %v, want partial", r2.marks["gone"])
	}
}
