// SPDX-License-Identifier: Apache-2.0

package stage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agentguard/agentguard/internal/checkpoint/checkpointtest"
	"github.com/agentguard/agentguard/internal/fixtures"
)

// tierOf is a tier of one other member, asked directly.
type tierOf struct {
	other *Stage[*recGroup]
	err   error
}

func (t tierOf) TakeOver(ctx context.Context, key, fingerprint string) ([]byte, bool, error) {
	if t.err != nil {
		return nil, false, t.err
	}
	return t.other.HandOver(ctx, key, fingerprint)
}

// member starts a stage of a tier (no storage, no warm-up).
func member(t *testing.T, r *recorder, clock *time.Time, tier Tier) *Stage[*recGroup] {
	t.Helper()
	cfg := baseConfig()
	cfg.Retention, cfg.CompactAfter = time.Hour, 10*time.Second
	s := newTestStage(t, cfg, r, new(consumertest.TracesSink))
	s.UseClock(func() time.Time { return *clock })
	if tier != nil {
		s.UseTier(tier)
	}
	if err := s.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	s.clock.halt()
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	return s
}

// twoMembers starts two members of a tier: b takes over from a.
func twoMembers(t *testing.T, clock *time.Time) (a, b *Stage[*recGroup], ra, rb *recorder) {
	t.Helper()
	ra, rb = newRecorder(), newRecorder()
	a = member(t, ra, clock, nil)
	b = member(t, rb, clock, tierOf{other: a})
	return a, b, ra, rb
}

// A conversation a rescale moves to another member is handed over: the
// member that held it forgets it without ending it, and the new one goes on
// with it, unmarked; a conversation nobody held starts afresh, unmarked.
func TestRescaleHandsTheConversationOver(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	a, b, ra, rb := twoMembers(t, &clock)
	feed(t, a, &clock, 0, "moved")
	feed(t, b, &clock, 1, "moved")
	feed(t, b, &clock, 2, "new")
	if a.OpenGroups() != 0 || b.OpenGroups() != 2 {
		t.Errorf("open groups: %d on the old member, %d on the new; want 0 and 2", a.OpenGroups(), b.OpenGroups())
	}
	if !rb.marks["moved"].Complete() || !rb.marks["new"].Complete() {
		t.Errorf("marks on the new member: %v; want both complete", rb.marks)
	}
	clock = clock.Add(2 * time.Minute)
	a.Tick(clock)
	if ra.ended["moved"] != 0 {
		t.Error("the old member ended the conversation it handed over")
	}
}

// A member that cannot say whether it held the conversation: the new
// group is marked partial (reason rescale).
func TestRescaleWithASilentMemberMarks(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	rb := newRecorder()
	b := member(t, rb, &clock, tierOf{err: errors.New("connection refused")})
	feed(t, b, &clock, 1, "moved")
	if rb.marks["moved"] != HistoryPartial {
		t.Errorf("mark %v, want partial", rb.marks["moved"])
	}
}

// A group kept after it ended idle is handed over too; one of another
// configuration is refused, and stays.
func TestHandOverKeptGroupAndConfiguration(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	a := member(t, newRecorder(), &clock, nil)
	feed(t, a, &clock, 0, "paused")
	clock = clock.Add(2 * time.Minute)
	a.Tick(clock) // ended idle, kept
	if _, _, err := a.HandOver(context.Background(), "paused", "another"); !errors.Is(err, ErrOtherConfiguration) {
		t.Fatalf("another configuration: %v", err)
	}
	saved, found, err := a.HandOver(context.Background(), "paused", "recorder")
	if err != nil || !found || len(saved) == 0 {
		t.Fatalf("a kept group: found %v, %d bytes, %v", found, len(saved), err)
	}
	if _, found, _ := a.HandOver(context.Background(), "paused", "recorder"); found {
		t.Error("a group handed over twice")
	}
}

// A kept group handed over goes on at the member that takes it: the member
// that gave it up takes back the end it reported (a Resumer's, such as
// probguard's learning), so the tier counts the conversation's end once,
// where it ends.
func TestAKeptGroupHandedOverTakesBackItsEnd(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	a, b, ra, rb := twoMembers(t, &clock)
	feed(t, a, &clock, 0, "paused")
	clock = clock.Add(2 * time.Minute)
	a.Tick(clock) // ended idle, kept
	feed(t, b, &clock, 1, "paused")
	clock = clock.Add(2 * time.Minute)
	b.Tick(clock) // ended idle at the new member
	ends := ra.ended["paused"] - ra.resumed["paused"] + rb.ended["paused"] - rb.resumed["paused"]
	if ra.ended["paused"] != 1 || ra.resumed["paused"] != 1 || ends != 1 {
		t.Errorf("old member: %d ends, %d taken back; new member: %d, %d; want the end once across the tier",
			ra.ended["paused"], ra.resumed["paused"], rb.ended["paused"], rb.resumed["paused"])
	}
}

// A turn the old member still holds when the conversation moves is judged
// there before the group is handed over, so the new member has it; a turn
// that comes to the old member after it is marked partial there.
func TestHandOverTakesTheHeldTurnsAlong(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	a, b, ra, _ := twoMembers(t, &clock)
	feed(t, a, &clock, 0, "moved")
	if err := a.ConsumeTraces(context.Background(), fixtures.StoveTrace(1, "moved", fixtures.ToolCall{Tool: "stir"})); err != nil {
		t.Fatal(err)
	}
	feed(t, b, &clock, 2, "moved")
	if a.Held() != 0 || len(ra.tools["moved"]) != 2 {
		t.Errorf("the old member holds %d traces and judged %v; want its two turns judged, none held", a.Held(), ra.tools["moved"])
	}
	feed(t, a, &clock, 3, "moved")
	if ra.marks["moved"] != HistoryPartial {
		t.Errorf("a turn back at the old member after the hand-over: %v, want partial", ra.marks["moved"])
	}
}

// lateTier is a tier whose member is known only once both are made.
type lateTier struct{ other **Stage[*recGroup] }

func (t lateTier) TakeOver(ctx context.Context, key, fingerprint string) ([]byte, bool, error) {
	return (*t.other).HandOver(ctx, key, fingerprint)
}

// Two members, each the other's peer, both opening new conversations at
// once: each worker waits on the other member for every new one, and the
// other answers "not held" without its worker, so that they never wait on
// each other (which would mark every conversation partial after a second).
func TestMembersTakingOverAtOnceDoNotWaitOnEachOther(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	var a, b *Stage[*recGroup]
	ra, rb := newRecorder(), newRecorder()
	a = member(t, ra, &clock, lateTier{&b})
	b = member(t, rb, &clock, lateTier{&a})
	start := time.Now()
	done := make(chan error, 2)
	for i, s := range []*Stage[*recGroup]{a, b} {
		go func() {
			for c := range 40 {
				td := fixtures.StoveTrace(c, fmt.Sprintf("m%d-conv-%d", i, c), fixtures.ToolCall{Tool: "stir"})
				if err := s.ConsumeTraces(context.Background(), td); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	clock = clock.Add(2 * time.Second)
	var wg sync.WaitGroup
	wg.Go(func() { a.Tick(clock) })
	wg.Go(func() { b.Tick(clock) })
	wg.Wait()
	for _, r := range []*recorder{ra, rb} {
		r.mu.Lock()
		for key, h := range r.marks {
			if !h.Complete() {
				t.Errorf("%s marked %v: a take-over timed out", key, h)
			}
		}
		r.mu.Unlock()
	}
	if took := time.Since(start); took > takeOverTimeout {
		t.Errorf("80 new conversations took %v", took)
	}
}

// A member with storage that handed a conversation over and then crashed
// does not restore it: the state log says it went, so it has one holder.
func TestAGroupHandedOverStaysGoneThroughACrash(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	cfg := storageConfig()
	cfg.CheckpointEvery, cfg.WarmUp = time.Hour, 0
	a := startOn(t, store, cfg, newRecorder(), new(consumertest.TracesSink), &clock)
	b := member(t, newRecorder(), &clock, tierOf{other: a})
	feed(t, a, &clock, 0, "moved")
	feed(t, b, &clock, 1, "moved")
	if a.OpenGroups() != 0 {
		t.Fatalf("%d groups open on the member that handed it over", a.OpenGroups())
	}
	// a killed: no Shutdown, nothing more written.
	after, _ := restartOn(t, store, cfg, &clock)
	if after.OpenGroups() != 0 {
		t.Errorf("%d groups restored after the crash, want none: the conversation is the other member's", after.OpenGroups())
	}
}

// A hand-over while the outbox holds spans judged (send_batch): their
// groups' state is written only once they are passed on, so a crash then
// judges none of them twice (replayed from the journal on top of a state
// that already holds them).
func TestAHandOverPassesTheOutboxOnFirst(t *testing.T) {
	store := checkpointtest.NewStore()
	clock := time.Unix(1_800_000_000, 0)
	cfg := storageConfig()
	cfg.CheckpointEvery, cfg.WarmUp, cfg.Workers = time.Hour, 0, 1
	cfg.SendBatch = SendBatch{Timeout: time.Hour}
	a := startOn(t, store, cfg, newRecorder(), new(consumertest.TracesSink), &clock)
	b := member(t, newRecorder(), &clock, tierOf{other: a})
	feed(t, a, &clock, 0, "stays")
	feed(t, a, &clock, 1, "moved")
	feed(t, b, &clock, 2, "moved")
	if a.OpenGroups() != 1 {
		t.Fatalf("%d groups open on the member that handed one over, want 1", a.OpenGroups())
	}
	// a killed: no Shutdown, nothing more written.
	after, r := restartOn(t, store, cfg, &clock)
	clock = clock.Add(2 * time.Second)
	after.Tick(clock)
	if n := len(r.tools["stays"]); n != 0 {
		t.Errorf("the turn of stays judged %d more time(s) after the crash, on top of its restored state", n)
	}
}
