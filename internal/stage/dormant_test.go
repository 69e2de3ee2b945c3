// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentguard/agentguard/internal/checkpoint/checkpointtest"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// startCompacting starts a stage on the store whose groups go dormant after
// five idle seconds; the test's Tick is its only clock.
func startCompacting(t *testing.T, store *checkpointtest.Store, r *recorder, clock *time.Time) *Stage[*recGroup] {
	t.Helper()
	cfg := storageConfig()
	cfg.WarmUp, cfg.CompactAfter = 0, 5*time.Second
	s := newTestStage(t, cfg, r, new(consumertest.TracesSink))
	s.UseClock(func() time.Time { return *clock })
	if err := s.Start(context.Background(), store.Host(storageID)); err != nil {
		t.Fatal(err)
	}
	s.clock.halt()
	return s
}

// A group idle for compact_after is dormant but open: a trace of it takes
// it up where it was, unmarked; a question about it finds it open and
// leaves it dormant; a checkpoint saves it and a restart brings it back
// open; group_timeout ends it as any other.
func TestDormantGroupsStayOpen(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	r := newRecorder()
	s := startCompacting(t, store, r, &clock)
	for turn, conv := range []string{"a", "b", "c"} {
		feed(t, s, &clock, turn, conv)
	}
	clock = clock.Add(10 * time.Second)
	s.Tick(clock)
	if s.OpenGroups() != 3 || s.DormantGroups() != 3 {
		t.Fatalf("%d open, %d dormant: want 3 and 3", s.OpenGroups(), s.DormantGroups())
	}
	var asked Hypothesis[*recGroup]
	if err := s.Ask(context.Background(), "b", pcommon.SpanID{}, ptrace.NewTraces(), func(h Hypothesis[*recGroup]) { asked = h }); err != nil {
		t.Fatal(err)
	}
	if !asked.Open || asked.State == nil || asked.State.key != "b" || s.DormantGroups() != 3 {
		t.Errorf("a question about a dormant group: open %v, state %+v, %d dormant after it", asked.Open, asked.State, s.DormantGroups())
	}
	feed(t, s, &clock, 3, "a")
	if s.OpenGroups() != 3 || s.DormantGroups() != 2 {
		t.Errorf("after a's next turn: %d open, %d dormant", s.OpenGroups(), s.DormantGroups())
	}
	if !r.marks["a"].Complete() || !slices.Equal(r.tools["a"], []string{"stir", "stir"}) {
		t.Errorf("a woken: marked %v, judged %v", r.marks["a"], r.tools["a"])
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(r.ended) != 0 {
		t.Errorf("groups ended at a shutdown with storage: %v", r.ended)
	}

	r2 := newRecorder()
	s2 := startCompacting(t, store, r2, &clock)
	defer s2.Shutdown(context.Background())
	if s2.OpenGroups() != 3 {
		t.Fatalf("%d groups restored, want 3 (two of them dormant when saved)", s2.OpenGroups())
	}
	feed(t, s2, &clock, 4, "c")
	if !r2.marks["c"].Complete() {
		t.Errorf("c after the restart: marked %v", r2.marks["c"])
	}
	clock = clock.Add(2 * time.Minute) // past group_timeout: dormant or not, every group ends
	s2.Tick(clock)
	if s2.OpenGroups() != 0 || s2.DormantGroups() != 0 || len(r2.ended) != 3 {
		t.Errorf("after group_timeout: %d open, %d dormant, ended %v", s2.OpenGroups(), s2.DormantGroups(), r2.ended)
	}
}

// max_traces bounds the open groups, dormant ones included: past it the
// least recently active ends early, dormant or not.
func TestDormantGroupsCountAgainstTheBound(t *testing.T) {
	r := newRecorder()
	cfg := baseConfig()
	cfg.Workers, cfg.MaxTraces, cfg.CompactAfter = 1, 3, 5*time.Second
	s := newTestStage(t, cfg, r, new(consumertest.TracesSink))
	clock := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return clock })
	defer s.Shutdown(context.Background())
	for turn, conv := range []string{"a", "b", "c"} {
		feed(t, s, &clock, turn, conv)
	}
	clock = clock.Add(10 * time.Second)
	s.Tick(clock)
	if s.DormantGroups() != 3 {
		t.Fatalf("%d dormant, want 3", s.DormantGroups())
	}
	if err := s.ConsumeTraces(context.Background(), fixtures.StoveTrace(3, "d", fixtures.ToolCall{Tool: "stir"})); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(2 * time.Second)
	s.Tick(clock)
	if s.OpenGroups() != 3 || r.ended["a"] != 1 || len(r.ended) != 1 {
		t.Errorf("a fourth group over a bound of 3: %d open, ended %v (want a, the least recently active)", s.OpenGroups(), r.ended)
	}
}

// A dormant conversation a rescale moves is handed over as an open one: the
// new member goes on with it, unmarked, and the old one forgets it without
// ending it.
func TestRescaleHandsADormantConversationOver(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	a, b, ra, rb := twoMembers(t, &clock)
	feed(t, a, &clock, 0, "moved")
	clock = clock.Add(20 * time.Second)
	a.Tick(clock)
	if a.DormantGroups() != 1 {
		t.Fatalf("%d dormant on the old member, want 1", a.DormantGroups())
	}
	feed(t, b, &clock, 1, "moved")
	if a.OpenGroups() != 0 || a.DormantGroups() != 0 || b.OpenGroups() != 1 || !rb.marks["moved"].Complete() {
		t.Errorf("after the hand-over: old member %d open, %d dormant; new member %d open, marked %v",
			a.OpenGroups(), a.DormantGroups(), b.OpenGroups(), rb.marks["moved"])
	}
	clock = clock.Add(2 * time.Minute)
	a.Tick(clock)
	if ra.ended["moved"] != 0 {
		t.Error("the old member ended the conversation it handed over")
	}
}

// A conversation that ended idle and is kept (retention) is what its next
// trace takes up: a question about it is answered from that state, as
// open, and leaves it kept; one forgotten, or never seen, is not open.
func TestAQuestionAboutAKeptConversationSeesItsState(t *testing.T) {
	r := newRecorder()
	cfg := baseConfig()
	cfg.Workers, cfg.Retention = 1, time.Hour
	s := newTestStage(t, cfg, r, new(consumertest.TracesSink))
	clock := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return clock })
	defer s.Shutdown(context.Background())
	feed(t, s, &clock, 0, "a")
	clock = clock.Add(2 * time.Minute) // past group_timeout: a ends, and is kept
	s.Tick(clock)
	if s.OpenGroups() != 0 || r.ended["a"] != 1 {
		t.Fatalf("after group_timeout: %d open, a ended %d times", s.OpenGroups(), r.ended["a"])
	}
	ask := func(key string) Hypothesis[*recGroup] {
		var h Hypothesis[*recGroup]
		if err := s.Ask(context.Background(), key, pcommon.SpanID{}, ptrace.NewTraces(), func(got Hypothesis[*recGroup]) { h = got }); err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := ask("a"); !h.Open || h.State == nil || h.State.key != "a" {
		t.Errorf("a question about a kept conversation: open %v, state %+v", h.Open, h.State)
	}
	if h := ask("never-seen"); h.Open {
		t.Error("a conversation never seen is open")
	}
	feed(t, s, &clock, 1, "a") // the next turn takes it up where it was
	if !slices.Equal(r.tools["a"], []string{"stir", "stir"}) || !r.marks["a"].Complete() {
		t.Errorf("a taken up after the question: judged %v, marked %v", r.tools["a"], r.marks["a"])
	}
	clock = clock.Add(2 * time.Minute) // ends, kept again
	s.Tick(clock)
	clock = clock.Add(time.Hour + time.Second) // past the retention: forgotten
	s.Tick(clock)
	if h := ask("a"); h.Open {
		t.Error("a conversation kept longer than the retention is still open to questions")
	}
}
