// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agentguard/agentguard/internal/checkpoint"
	"github.com/agentguard/agentguard/internal/checkpoint/checkpointtest"
)

// A state entry reads back as written, each group where it was.
func TestStateEntryRoundTrip(t *testing.T) {
	open := savedGroup{key: "a", seen: 7, history: HistoryPartial, latest: 9, state: []byte("s"), own: true}
	kept := savedGroup{key: "b", seen: 8, state: []byte{}}
	in := []groupState{
		{key: "a", where: stateOpen, saved: appendSaved(nil, open)},
		{key: "b", where: stateKept, saved: appendSaved(nil, kept)},
		{key: "c", where: stateForgotten, forgotten: forgottenKey{key: "c", reason: markBound, when: 3}},
		{key: "d", where: stateGone},
	}
	fp, out, err := decodeStates(encodeStates("fp", in))
	if err != nil {
		t.Fatal(err)
	}
	if fp != "fp" || !reflect.DeepEqual(out, in) {
		t.Errorf("read back %q %+v, want %+v", fp, out, in)
	}
}

// The latest entry of a group decides where it is restored, over the
// checkpoint; the groups no entry names stay as the checkpoint holds them.
func TestStatesApplyOverTheCheckpoint(t *testing.T) {
	saved := func(key string, seen int64) []byte {
		return appendSaved(nil, savedGroup{key: key, seen: seen, state: []byte{}})
	}
	d := decoded{
		groups:    []savedGroup{{key: "open-then-gone", state: []byte{}}, {key: "untouched", state: []byte{}}},
		kept:      [][]byte{saved("kept-then-open", 1)},
		forgotten: []forgottenKey{{key: "forgotten-then-kept", reason: markBound}},
	}
	entries := [][]byte{
		encodeStates("fp", []groupState{{key: "open-then-gone", where: stateOpen, saved: saved("open-then-gone", 2)}}),
		encodeStates("fp", []groupState{
			{key: "open-then-gone", where: stateGone},
			{key: "kept-then-open", where: stateOpen, saved: saved("kept-then-open", 3)},
			{key: "forgotten-then-kept", where: stateKept, saved: saved("forgotten-then-kept", 4)},
			{key: "new", where: stateForgotten, forgotten: forgottenKey{key: "new", reason: markRetention, when: 5}},
		}),
	}
	if err := applyStates(&d, entries, "fp"); err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, g := range d.groups {
		open = append(open, g.key)
	}
	if !reflect.DeepEqual(open, []string{"untouched", "kept-then-open"}) || len(d.kept) != 1 || len(d.forgotten) != 1 || d.forgotten[0].key != "new" {
		t.Errorf("open %v, kept %d, forgotten %+v", open, len(d.kept), d.forgotten)
	}
	if err := applyStates(&d, entries, "other"); err == nil {
		t.Error("an entry of another configuration was applied")
	}
}

// Any bytes decode to states or to an error, never a panic; what decodes,
// encoded again, decodes to the same states.
func FuzzDecodeStates(f *testing.F) {
	f.Add(encodeStates("fp", []groupState{{key: "d", where: stateGone}}))
	f.Add(encodeStates("fp", []groupState{{key: "a", where: stateOpen, saved: appendSaved(nil, savedGroup{key: "a", state: []byte{}})}}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		fp, states, err := decodeStates(data)
		if err != nil {
			return
		}
		fp2, again, err := decodeStates(encodeStates(fp, states))
		if err != nil || fp2 != fp || !reflect.DeepEqual(again, states) {
			t.Errorf("%x: %q %+v encoded and decoded again as %q %+v (%v)", data, fp, states, fp2, again, err)
		}
	})
}

// versionFiveCheckpoint is a checkpoint an older build wrote: group open,
// no state log mark.
func versionFiveCheckpoint(clock time.Time, open string) []byte {
	cp := append([]byte(checkpointMagic), checkpoint.AppendUvarint(nil, 5)...)
	cp = checkpoint.AppendBool(cp, false)
	cp = checkpoint.AppendString(cp, "recorder")
	cp = checkpoint.AppendVarint(cp, clock.UnixNano())
	cp = checkpoint.AppendUvarint(cp, 1)
	cp = appendSaved(cp, savedGroup{key: open, seen: clock.UnixNano(), state: checkpoint.AppendString(nil, open)})
	return checkpoint.AppendUvarint(checkpoint.AppendUvarint(cp, 0), 0) // no kept, no forgotten groups
}

// putStates writes state entries as a run that crashed would have left them.
func putStates(store *checkpointtest.Store, entries ...[]groupState) {
	for i, e := range entries {
		store.Put(stageID, stateKey(uint64(i)), encodeStates("recorder", e))
	}
	store.Put(stageID, stateNextKey, encodeSeq(uint64(len(entries))))
}

// State entries left by a run before a checkpoint an older build wrote (a
// downgrade, then an upgrade) are not applied over it: it is newer than
// them. The next checkpoint deletes them.
func TestStatesAreNotAppliedOverAnOlderBuildsCheckpoint(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	store.Put(stageID, checkpointKey, versionFiveCheckpoint(clock, "a"))
	putStates(store, []groupState{{key: "a", where: stateGone}, {key: "stale", where: stateOpen, saved: appendSaved(nil, savedGroup{key: "stale", state: checkpoint.AppendString(nil, "stale")})}})
	s, r := restartOn(t, store, storageConfig(), &clock)
	if s.OpenGroups() != 1 {
		t.Errorf("%d groups restored, want the checkpoint's one", s.OpenGroups())
	}
	feed(t, s, &clock, 1, "a")
	if !r.marks["a"].Complete() {
		t.Errorf("a %v, want complete: the checkpoint's group goes on", r.marks["a"])
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if v := store.Get(stageID, stateKey(0)); v != nil {
		t.Error("the stale state entry outlived the next checkpoint")
	}
}

// A state log that cannot be read: the checkpoint's groups are restored,
// marked partial (turns judged after it may be missing from them).
func TestAnUnreadableStateLogMarksTheRestoredGroups(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	shutDownHolding(t, store, &clock, "a")
	store.Put(stageID, stateNextKey, []byte{1, 2, 3}) // damaged
	s2, r := restartOn(t, store, storageConfig(), &clock)
	feed(t, s2, &clock, 1, "a")
	if r.marks["a"] != HistoryPartial {
		t.Errorf("a after a start with the state log unreadable: %v, want partial", r.marks["a"])
	}
}

// restoredAfterAKill feeds turn of conv to s, kills it (no Shutdown,
// nothing more written), and returns how many groups a restart of cfg on
// the store restores.
func restoredAfterAKill(t *testing.T, s *Stage[*recGroup], store *checkpointtest.Store, cfg Config, clock *time.Time, turn int, conv string) int {
	t.Helper()
	feed(t, s, clock, turn, conv)
	after, _ := restartOn(t, store, cfg, clock)
	return after.OpenGroups()
}

// A start from a checkpoint whose state log mark it cannot use (an older
// build's, which does not say where the log after it begins; another
// configuration's, which it cannot restore) checkpoints before judging: a
// crash then loses nothing judged after the start.
func TestACrashAfterAStartFromAnUnusableCheckpointLosesNoJudgedTurn(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	other := appendHeader(nil, header{clean: true, fingerprint: "another configuration", written: clock}, 0)
	for _, tc := range []struct {
		name     string
		stored   []byte
		restored int
		want     string
	}{
		{"an older build's", versionFiveCheckpoint(clock, "a"), 2, "a (the older build's checkpoint) and b (judged after the upgrade)"},
		{"another configuration's", checkpoint.AppendUvarint(checkpoint.AppendUvarint(checkpoint.AppendUvarint(other, 0), 0), 0), 1, "b (judged after the start)"},
	} {
		store := checkpointtest.NewStore()
		store.Put(stageID, checkpointKey, tc.stored)
		cfg := storageConfig()
		cfg.CheckpointEvery = time.Hour
		s := startOn(t, store, cfg, newRecorder(), new(consumertest.TracesSink), &clock)
		if n := restoredAfterAKill(t, s, store, cfg, &clock, 2, "b"); n != tc.restored {
			t.Errorf("%s: %d groups restored, want %s", tc.name, n, tc.want)
		}
	}
}

// A state log whose bounds cannot be read starts again, and a checkpoint at
// start records where: a crash then loses nothing judged after the start.
func TestACrashAfterAnUnreadableStateLogLosesNoJudgedTurn(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	cfg := storageConfig()
	cfg.CheckpointEvery, cfg.WarmUp = time.Hour, 0
	s := startOn(t, store, cfg, newRecorder(), new(consumertest.TracesSink), &clock)
	for turn := range 5 {
		feed(t, s, &clock, turn, fmt.Sprintf("old-%d", turn)) // entries 0 to 4
	}
	if err := s.Shutdown(context.Background()); err != nil { // a checkpoint: the log begins at 5
		t.Fatal(err)
	}
	store.Put(stageID, stateNextKey, []byte{1, 2, 3}) // damaged
	s2 := startOn(t, store, cfg, newRecorder(), new(consumertest.TracesSink), &clock)
	if n := restoredAfterAKill(t, s2, store, cfg, &clock, 6, "b"); n != 6 {
		t.Errorf("%d groups restored, want the 5 of the checkpoint and b", n)
	}
}
