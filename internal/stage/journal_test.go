// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/checkpoint/checkpointtest"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// spanIDs adds the span IDs of what a sink received to seen.
func spanIDs(seen map[pcommon.SpanID]int, sink *consumertest.TracesSink) {
	for _, td := range sink.AllTraces() {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					seen[sp.SpanID()]++
				}
			}
		}
	}
}

// A crash (no Shutdown) loses no span the stage acknowledged: the ones it
// held come back from the journal at the next start and are passed on, and
// none judged before the last checkpoint is judged again.
func TestCrashLosesNoAcknowledgedSpan(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	r, sink := newRecorder(), new(consumertest.TracesSink)
	s := startOn(t, store, storageConfig(), r, sink, &clock)
	sent := map[pcommon.SpanID]int{}
	consume := func(s *Stage[*recGroup], turn int, conv string) {
		td := fixtures.StoveTrace(turn, conv, fixtures.ToolCall{Tool: "stir"})
		for _, sp := range td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().All() {
			sent[sp.SpanID()]++
		}
		if err := s.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	consume(s, 0, "a")
	clock = clock.Add(10 * time.Second)
	s.Tick(clock) // a judged and passed on, then checkpointed
	consume(s, 1, "b")
	consume(s, 2, "a")
	if s.Held() != 2 {
		t.Fatalf("%d traces held, want 2", s.Held())
	}
	// killed: no Shutdown.
	r2, sink2 := newRecorder(), new(consumertest.TracesSink)
	s2 := startOn(t, store, storageConfig(), r2, sink2, &clock)
	defer s2.Shutdown(context.Background())
	if s2.Held() != 2 {
		t.Fatalf("%d traces held after the restart, want the 2 the crash left", s2.Held())
	}
	clock = clock.Add(2 * time.Second)
	s2.Tick(clock)
	got := map[pcommon.SpanID]int{}
	spanIDs(got, sink)
	spanIDs(got, sink2)
	for id := range sent {
		if got[id] != 1 {
			t.Errorf("span %s passed on %d times, want once", id, got[id])
		}
	}
	if len(r2.tools["a"]) != 1 || len(r2.tools["b"]) != 1 {
		t.Errorf("judged after the restart: %v; want a's second turn and b's turn only", r2.tools)
	}
}

// A span passed on and judged after the last checkpoint is not replayed:
// its effect is in the state log (its group restored as judged), and it is
// neither judged nor passed on twice.
func TestJournalForgetsWhatWasPassedOn(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	s := startOn(t, store, storageConfig(), newRecorder(), new(consumertest.TracesSink), &clock)
	feed(t, s, &clock, 0, "a") // judged and passed on after the start's checkpoint
	for _, k := range store.Keys(stageID) {
		if strings.HasPrefix(k, journalEntryPrefix) {
			t.Errorf("entry %q still in the journal after its spans were passed on", k)
		}
	}
	r2, sink2 := newRecorder(), new(consumertest.TracesSink)
	s2 := startOn(t, store, storageConfig(), r2, sink2, &clock)
	defer s2.Shutdown(context.Background())
	clock = clock.Add(2 * time.Second)
	s2.Tick(clock)
	if sink2.SpanCount() != 0 || len(r2.tools) != 0 {
		t.Errorf("after the restart: %d spans passed on, judged %v; want nothing", sink2.SpanCount(), r2.tools)
	}
}

// A storage that cannot write (a full disk) refuses the batch: nothing is
// taken, the error is not permanent (the sender retries), it is counted;
// once the storage writes again, spans are taken.
func TestFullStorageRefusesSpans(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	sink := new(consumertest.TracesSink)
	s := startOn(t, store, storageConfig(), newRecorder(), sink, &clock)
	defer s.Shutdown(context.Background())
	store.Fail = syscall.ENOSPC
	err := s.ConsumeTraces(context.Background(), fixtures.StoveTrace(0, "a", fixtures.ToolCall{Tool: "stir"}))
	if err == nil || consumererror.IsPermanent(err) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a full storage: %v, want a retryable error wrapping ENOSPC", err)
	}
	clock = clock.Add(2 * time.Second)
	s.Tick(clock)
	if s.Held() != 0 || sink.SpanCount() != 0 {
		t.Fatalf("a refused batch: %d traces held, %d spans passed on; want nothing taken", s.Held(), sink.SpanCount())
	}
	store.Fail = nil
	feed(t, s, &clock, 0, "a")
	if sink.SpanCount() == 0 {
		t.Error("the storage writes again, and the batch was not taken")
	}
}

// A clean shutdown leaves an empty journal, and a start from it replays
// nothing.
func TestShutdownEmptiesTheJournal(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	sink := new(consumertest.TracesSink)
	s := startOn(t, store, storageConfig(), newRecorder(), sink, &clock)
	for turn, conv := range []string{"a", "b", "a"} {
		if err := s.ConsumeTraces(context.Background(), fixtures.StoveTrace(turn, conv, fixtures.ToolCall{Tool: "stir"})); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, k := range store.Keys(stageID) {
		if strings.HasPrefix(k, journalEntryPrefix) {
			t.Errorf("entry %q left in the journal by a clean shutdown", k)
		}
	}
	sink2 := new(consumertest.TracesSink)
	s2 := startOn(t, store, storageConfig(), newRecorder(), sink2, &clock)
	defer s2.Shutdown(context.Background())
	if s2.Held() != 0 {
		t.Errorf("%d traces replayed after a clean shutdown", s2.Held())
	}
}

// An entry that cannot be decoded is counted lost and deleted; the others
// are replayed.
func TestDamagedJournalEntryIsSetAside(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	s := startOn(t, store, storageConfig(), newRecorder(), new(consumertest.TracesSink), &clock)
	for turn, conv := range []string{"a", "b"} {
		if err := s.ConsumeTraces(context.Background(), fixtures.StoveTrace(turn, conv, fixtures.ToolCall{Tool: "stir"})); err != nil {
			t.Fatal(err)
		}
	}
	store.Put(stageID, journalKey(0), []byte{0xff, 0xff, 0xff})
	s2 := startOn(t, store, storageConfig(), newRecorder(), new(consumertest.TracesSink), &clock)
	defer s2.Shutdown(context.Background())
	if s2.Held() != 1 {
		t.Errorf("%d traces replayed, want the one undamaged", s2.Held())
	}
	if v := store.Get(stageID, journalKey(0)); v != nil {
		t.Error("the damaged entry was left in the journal")
	}
}

// The journal regroups a batch by trace and keeps every span.
func TestJournalWriteKeepsTheBatch(t *testing.T) {
	td := ptrace.NewTraces()
	for turn := range 3 {
		fixtures.StoveTrace(turn, "c", fixtures.ToolCall{Tool: "stir"}).ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	n := td.SpanCount()
	store := checkpointtest.NewStore()
	client, _ := store.GetClient(context.Background(), component.KindProcessor, stageID, "")
	entries, err := newJournal(client).write(context.Background(), td)
	if err != nil || len(entries) != 3 || td.SpanCount() != n {
		t.Fatalf("%d entries, %d of %d spans kept, %v", len(entries), td.SpanCount(), n, err)
	}
	for i, e := range entries {
		if e.seq != uint64(i) {
			t.Errorf("entry %d numbered %d", i, e.seq)
		}
	}
}
