// SPDX-License-Identifier: Apache-2.0

package temporalcheck

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/checkpoint/checkpointtest"
	"github.com/agentguard/agentguard/internal/core/assertion"
	"github.com/agentguard/agentguard/internal/core/predicate"
	"github.com/agentguard/agentguard/internal/verdictattr"
	"github.com/agentguard/agentguard/processor/temporalcheck/internal/metadata"
)

// playConversations plays turn of every conversation, each its own trace,
// and releases them.
func playConversations(t *testing.T, p *temporalProcessor, clock *lockedClock, n int, turns ...int) {
	t.Helper()
	for _, turn := range turns {
		for c := range n {
			td := weatherTurn(c*10+turn, fmt.Sprintf("conv-%02d", c), conversationTools[turn])
			if err := p.ConsumeTraces(context.Background(), td); err != nil {
				t.Fatal(err)
			}
		}
		p.Tick(clock.add(15 * time.Second))
	}
}

// The kill-and-restart scenario with storage: conversations whose te3
// violation spans two turns (the transfer to the weather agent in one, the
// goodbye instead of an answer in the next); the backend is killed after
// the first turns were checkpointed, and a new one gets the second turns.
// Every cross-turn violation is reported, unmarked, as by one collector that
// never stopped; without storage every one of them is lost.
func TestKillAndRestartLosesNoCheckpointedVerdict(t *testing.T) {
	const conversations = 20
	storageID := component.MustNewIDWithName("file_storage", "x")
	run := func(storage bool) (violations, marked int) {
		clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
		store := checkpointtest.NewStore()
		cfg := weatherConfig()
		cfg.WarmUp = new(time.Duration) // the first backend: none ran before it
		if storage {
			cfg.Storage = &storageID
		}
		first, _ := startProcessorOn(t, cfg, clock, store.Host(storageID))
		playConversations(t, first, clock, conversations, 3)
		first.Tick(clock.add(cfg.CheckpointInterval)) // a periodic checkpoint
		// killed: no Shutdown, nothing more written; its goroutines are
		// stopped at the end of the test without writing to the store.
		defer func() { store.Fail = fmt.Errorf("the killed backend writes nothing"); shutdown(t, first) }()

		cfg2 := weatherConfig()
		if storage {
			cfg2.Storage = &storageID
		}
		second, sink := startProcessorOn(t, cfg2, clock, store.Host(storageID))
		playConversations(t, second, clock, conversations, 5)
		shutdown(t, second)
		for _, v := range violationsOf(sink) {
			violations++
			if v.history != "" {
				marked++
			}
		}
		return violations, marked
	}
	// One collector that never stopped: every conversation violates te3 once.
	clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
	ref, refSink := startProcessor(t, weatherConfig(), clock)
	playConversations(t, ref, clock, conversations, 3, 5)
	shutdown(t, ref)
	if got := len(violationsOf(refSink)); got != conversations {
		t.Fatalf("one collector: %d violations, want %d", got, conversations)
	}

	if v, m := run(true); v != conversations || m != 0 {
		t.Errorf("with storage: %d violations (%d marked) after the restart, want %d unmarked", v, m, conversations)
	} else {
		t.Logf("with storage: %d of %d cross-turn violations after the kill and restart, none marked", v, conversations)
	}
	if v, _ := run(false); v != 0 {
		t.Errorf("without storage: %d violations after the restart, want 0 (the first turns are lost)", v)
	} else {
		t.Logf("without storage: 0 of %d cross-turn violations after the kill and restart", conversations)
	}
}

// The same kill with the first turns judged and passed on after the last
// checkpoint (here, before the first): the state log written with them
// restores their conversations, and every cross-turn violation is reported,
// unmarked.
func TestKillAfterTurnsNotYetCheckpointedLosesNoVerdict(t *testing.T) {
	const conversations = 20
	storageID := component.MustNewIDWithName("file_storage", "x")
	clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
	store := checkpointtest.NewStore()
	cfg := weatherConfig()
	cfg.WarmUp = new(time.Duration) // the first backend: none ran before it
	cfg.Storage, cfg.CheckpointInterval = &storageID, time.Hour
	first, _ := startProcessorOn(t, cfg, clock, store.Host(storageID))
	playConversations(t, first, clock, conversations, 3) // judged and passed on; no checkpoint is due
	defer func() { store.Fail = fmt.Errorf("the killed backend writes nothing"); shutdown(t, first) }()

	cfg2 := weatherConfig()
	cfg2.Storage = &storageID
	second, sink := startProcessorOn(t, cfg2, clock, store.Host(storageID))
	playConversations(t, second, clock, conversations, 5)
	shutdown(t, second)
	violations, marked := 0, 0
	for _, v := range violationsOf(sink) {
		violations++
		if v.history != "" {
			marked++
		}
	}
	if violations != conversations || marked != 0 {
		t.Errorf("%d violations (%d marked) after the kill and restart, want %d unmarked", violations, marked, conversations)
	}
}

// A checkpoint of open conversations, one turn in, costs little per group:
// its key, the few fixed fields and its one event's name and bits.
func TestCheckpointSizePerGroup(t *testing.T) {
	const groups = 10_000
	storageID := component.MustNewIDWithName("file_storage", "x")
	store := checkpointtest.NewStore()
	clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
	cfg := weatherConfig()
	cfg.Storage, cfg.WarmUp = &storageID, new(time.Duration)
	p, _ := startProcessorOn(t, cfg, clock, store.Host(storageID))
	batch := ptrace.NewTraces()
	for n := range groups {
		weatherTurn(n, fmt.Sprintf("conversation-%06d", n), "transfer_to_weather").ResourceSpans().MoveAndAppendTo(batch.ResourceSpans())
	}
	if err := p.ConsumeTraces(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	p.Tick(clock.add(15 * time.Second))
	began := time.Now()
	shutdown(t, p) // the shutdown's checkpoint
	took := time.Since(began)
	size := len(store.Get(component.NewID(metadata.Type), "groups"))
	perGroup := float64(size) / groups
	t.Logf("checkpoint of %d groups: %d bytes (%.0f a group), shutdown with it %v", groups, size, perGroup, took)
	began = time.Now()
	p2, _ := startProcessorOn(t, cfg, clock, store.Host(storageID))
	t.Logf("restored %d groups in %v", p2.OpenGroups(), time.Since(began))
	if p2.OpenGroups() != groups {
		t.Errorf("%d groups restored, want %d", p2.OpenGroups(), groups)
	}
	shutdown(t, p2)
	if perGroup > 150 {
		t.Errorf("a one-event group takes %.0f bytes in the checkpoint, want at most 150", perGroup)
	}
}

// A mark needs evidence that history was lost. A first start (no storage,
// or storage without a checkpoint) marks none of its verdicts, with the
// default warm_up; a start from a crash's checkpoint marks the verdicts on
// conversations first seen in its warm-up (their earlier turns may have come
// after that checkpoint), and a start from a shutdown's marks none.
func TestOnlyAStartWithLostHistoryMarks(t *testing.T) {
	storageID := component.MustNewIDWithName("file_storage", "x")
	// playAfter starts a backend on store (or none), plays turns 3 and 5
	// of fresh conversations (a te3 violation each), and counts the marked.
	playAfter := func(store *checkpointtest.Store, conversations int) (violations, marked int) {
		clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
		cfg := weatherConfig()
		cfg.WarmUp = nil // the default
		host := componenttest.NewNopHost()
		if store != nil {
			cfg.Storage, host = &storageID, store.Host(storageID)
		}
		p, sink := startProcessorOn(t, cfg, clock, host)
		playConversations(t, p, clock, conversations, 3, 5)
		shutdown(t, p)
		for _, v := range violationsOf(sink) {
			violations++
			if v.history != "" {
				marked++
			}
		}
		return violations, marked
	}
	// crashed leaves a crash's checkpoint of other conversations in a store.
	crashed := func() *checkpointtest.Store {
		store := checkpointtest.NewStore()
		clock := &lockedClock{t: time.Unix(1_799_999_000, 0)}
		cfg := weatherConfig()
		cfg.Storage = &storageID
		p, _ := startProcessorOn(t, cfg, clock, store.Host(storageID))
		if err := p.ConsumeTraces(context.Background(), weatherTurn(1, "earlier", conversationTools[1])); err != nil {
			t.Fatal(err)
		}
		p.Tick(clock.add(cfg.CheckpointInterval + 15*time.Second))
		store.Fail = fmt.Errorf("the killed backend writes nothing")
		shutdown(t, p)
		store.Fail = nil
		return store
	}
	const n = 5
	for _, tt := range []struct {
		name       string
		store      *checkpointtest.Store
		wantMarked int
	}{
		{"no storage", nil, 0},
		{"storage, no checkpoint", checkpointtest.NewStore(), 0},
		{"storage, a crash's checkpoint", crashed(), n},
	} {
		v, m := playAfter(tt.store, n)
		if v != n || m != tt.wantMarked {
			t.Errorf("%s: %d violations, %d marked; want %d, %d marked", tt.name, v, m, n, tt.wantMarked)
		}
	}
}

// A conversation kept after it ended idle goes into the checkpoint: after a
// restart, its next turn still continues it (a violation across the pause
// and the restart is caught, unmarked).
func TestKeptConversationsSurviveARestart(t *testing.T) {
	storageID := component.MustNewIDWithName("file_storage", "x")
	store := checkpointtest.NewStore()
	clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
	cfg := weatherConfig()
	cfg.Storage = &storageID
	first, _ := startProcessorOn(t, cfg, clock, store.Host(storageID))
	if err := first.ConsumeTraces(context.Background(), weatherTurn(1, "paused", "transfer_to_weather")); err != nil {
		t.Fatal(err)
	}
	first.Tick(clock.add(15 * time.Second))
	first.Tick(clock.add(10 * time.Minute)) // ends idle: kept
	shutdown(t, first)                      // the checkpoint holds it

	second, sink := startProcessorOn(t, cfg, clock, store.Host(storageID))
	if err := second.ConsumeTraces(context.Background(), weatherTurn(13, "paused", "say_goodbye")); err != nil {
		t.Fatal(err)
	}
	second.Tick(clock.add(15 * time.Second))
	shutdown(t, second)
	if got, want := failures(sink), []string{`te3 paused-13 ""`}; !slices.Equal(got, want) {
		t.Errorf("after the restart: %q, want %q", got, want)
	}
}

// A meter's state is checkpointed with its group: a count of tool calls
// that crosses its bound in the turn after the restart does so as in one
// collector that never stopped.
func TestMetersSurviveARestart(t *testing.T) {
	const conversations = 5
	storageID := component.MustNewIDWithName("file_storage", "x")
	config := func() *Config {
		cfg := weatherConfig()
		cfg.Predicates = append(cfg.Predicates, predicate.Named{Name: "secondCall",
			Predicate: predicate.Predicate{Budget: &predicate.Budget{Count: predicate.QuantityToolCalls, Max: 1}}})
		cfg.Assertions = []assertion.Config{{Name: "one_call", Never: "secondCall"}}
		cfg.Storage = &storageID
		return cfg
	}
	clock := &lockedClock{t: time.Unix(1_800_000_000, 0)}
	store := checkpointtest.NewStore()
	cfg := config()
	cfg.WarmUp = new(time.Duration)
	first, _ := startProcessorOn(t, cfg, clock, store.Host(storageID))
	playConversations(t, first, clock, conversations, 3)
	first.Tick(clock.add(cfg.CheckpointInterval))
	defer func() { store.Fail = fmt.Errorf("the killed backend writes nothing"); shutdown(t, first) }()

	second, sink := startProcessorOn(t, config(), clock, store.Host(storageID))
	playConversations(t, second, clock, conversations, 5)
	shutdown(t, second)
	var got []string
	eachFailure(sink, func(span ptrace.Span, a map[string]any) {
		history, _ := a[verdictattr.History].(string)
		got = append(got, fmt.Sprint(a[verdictattr.EvaluationName], " ", history))
	})
	if want := slices.Repeat([]string{"one_call "}, conversations); !slices.Equal(got, want) {
		t.Errorf("after the restart: %q, want %q", got, want)
	}
}
